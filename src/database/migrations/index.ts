import { InitialSchema1795270554236 } from './1795270554236-InitialSchema';

/** Every migration, in order. Add new ones here (generated with `npm run migration:generate`). */
export const MIGRATIONS = [InitialSchema1795270554236];
