import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** This process's name in leases and call claims: who holds a row. */
export const INSTANCE_ID = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
