import { z } from 'zod';
import { SECRET_NAME, SECRET_VALUE_MAX } from '@ds/decision-schema';
import { text } from './parse-body';

/**
 * PUT /app/v1/workspaces/{ws}/secrets/{name}: the secret the path names and the body's `value`, checked together
 * by the gateway before they are sent, so that one answer names both. The value goes into a header line, hence no
 * line breaks or NUL.
 */
export const WORKSPACE_SECRET = z.object({
  name: z
    .string({ error: 'must be 1 to 64 characters: capital letters, digits and _, starting with a letter' })
    .regex(SECRET_NAME, { error: 'must be 1 to 64 characters: capital letters, digits and _, starting with a letter' }),
  value: text(1, SECRET_VALUE_MAX, `must be a string of 1 to ${SECRET_VALUE_MAX} characters`).refine((value) => !/[\r\n\0]/.test(value), {
    error: 'must not contain line breaks or NUL',
  }),
});
