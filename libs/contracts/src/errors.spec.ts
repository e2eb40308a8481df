import { errorBody, ServiceError } from './errors';

describe('ServiceError on the wire', () => {
  it('travels with its code, status, message and details', () => {
    const wire = new ServiceError('INVALID_STATE', 'message is required', [{ path: 'message', message: 'required' }]).toWire();
    expect(wire).toEqual({ code: 'INVALID_STATE', status: 422, message: 'message is required', details: [{ path: 'message', message: 'required' }] });
    const back = ServiceError.fromWire(JSON.parse(JSON.stringify(wire)));
    expect([back.code, back.status, back.message, back.details]).toEqual(['INVALID_STATE', 422, 'message is required', wire.details]);
    expect(back.internal).toBeUndefined();
  });

  it('carries what the callee settled to its caller, and never into the public body', () => {
    const error = new ServiceError('ENGINE_UNAVAILABLE', 'The provider failed.');
    error.internal = { engine: 'checkpoint', model: 'ckpt-triage-7b' };
    const back = ServiceError.fromWire(JSON.parse(JSON.stringify(error.toWire())));
    expect(back.internal).toEqual({ engine: 'checkpoint', model: 'ckpt-triage-7b' });
    expect(errorBody(back.toWire(), 'req_1')).toEqual({ error: { code: 'ENGINE_UNAVAILABLE', message: 'The provider failed.', request_id: 'req_1' } });
  });

  it('ignores an internal part that is not an object', () => {
    const back = ServiceError.fromWire({ code: 'ENGINE_ERROR', status: 502, message: 'x', internal: 'checkpoint' as never });
    expect(back.internal).toBeUndefined();
  });
});
