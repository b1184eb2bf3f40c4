import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/database/data-source';

/**
 * Data source for the TypeORM CLI (`npm run migration:generate -- src/database/migrations/Name`,
 * `npm run migration:run`). Needs DATABASE_URL; the app itself runs migrations at start-up.
 */
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL must be set for the TypeORM CLI');
export default new DataSource(dataSourceOptions(url));
