// The OpenAPI 3.1 description of the public API, built from the definitions the services check with. Pure: no I/O.
export {
  openApiDocument,
  openApiPath,
  pathShape,
  undocumentedRoutes,
  isPublicApiRoute,
  OPENAPI_VERSION,
  type OpenApiDocument,
  type DocumentOptions,
} from './document';
export { decisionOpenApiDocument, stateJsonSchema, answerShapes } from './decision-document';
export { OPERATIONS, PARAMETERS, type Operation, type Auth } from './operations';
export { checkAgainstSchema, resolveRef, type JsonSchema, type SchemaProblem, type CheckOptions } from './json-schema';
export { typeScriptClient } from './typescript-client';
