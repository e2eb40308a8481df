/**
 * A request the simulator refuses as a real provider would, with a reason for the caller.
 * Parsers throw it so the server can answer 400 in whichever error format the route speaks.
 */
export class InvalidRequest extends Error {
  override readonly name = 'InvalidRequest';
}
