import { ServiceError } from '@ds/contracts';
import { NormalizedSchema, validateSchema } from '@ds/decision-schema';

/** The draft as a deploy takes it: validated again, since rules may have become stricter since it was saved. */
export function deployableDraft(schema: unknown): NormalizedSchema {
  const result = validateSchema(schema);
  if (!result.valid) throw new ServiceError('INVALID_SCHEMA', 'The decision schema is not valid.', result.issues);
  return result.schema;
}
