import { customAlphabet } from 'nanoid';
import { BASE62 } from '../keys/encoding.js';

const random = customAlphabet(BASE62, 24);

/** Prefixed random ids (`chatcmpl-...`, `req_...`, `acct_...`): the prefix tells what an id names. */
export const newId = (prefix: string): string => prefix + random();
