/** English texts of a failed run's page, kept apart from the main catalogue. */
export const FAILURE_EN = {
  'fail.heading': 'This run failed',
  'fail.lead': 'The caller was answered with this error; it is recorded here as it was sent. Failed runs are never billed.',
  'fail.code': 'Error code',
  'fail.message': 'Message',
  'fail.details': 'What was wrong',
  'fail.facts': 'Recorded with it',
  'fail.whole': 'the whole state',
  'fail.todo': 'What to do',
  'fail.party.caller': 'The caller’s request',
  'fail.party.settings': 'The decision’s engine settings',
  'fail.party.provider': 'The engine provider',
  'fail.party.service': 'The service',
  'fail.whose': 'Where it comes from',
  'fail.retry.yes': 'The caller may send the same request again.',
  'fail.retry.no': 'Sending the same request again fails the same way.',
  'fail.title.INVALID_STATE': 'The caller sent a state the decision does not accept',
  'fail.advice.INVALID_STATE':
    'The caller sent a state that does not match the decision’s state schema (or one too large for it). Fix the caller, or change the state schema in the editor and deploy it.',
  'fail.title.INVALID_REQUEST': 'The request could not be answered as sent',
  'fail.advice.INVALID_REQUEST': 'The message says what to change in the call (for example, leave out include=probabilities or send a smaller state).',
  'fail.title.ENGINE_NOT_CONFIGURED': 'No engine key could be used',
  'fail.advice.ENGINE_NOT_CONFIGURED':
    'The decision runs on the workspace’s own provider key and none is saved, or the service’s key is unavailable. Save and test a provider key under Engine settings, or let runs use the service’s key.',
  'fail.title.ENGINE_TIMEOUT': 'The engine did not answer in time',
  'fail.advice.ENGINE_TIMEOUT':
    'Provider trouble, not the caller’s: no answer came within the decision’s timeout, retries included. The caller may retry; if it keeps happening, raise the timeout in the decision’s settings, or set “On engine error” to the fallback action.',
  'fail.title.ENGINE_RATE_LIMITED': 'The engine provider was overloaded or rate limited',
  'fail.advice.ENGINE_RATE_LIMITED':
    'Provider trouble, not the caller’s: the provider refused for load, or the shared engine key had no free slot in time. The caller may retry after a moment; a workspace’s own provider key, or “On engine error” set to the fallback action, avoids it.',
  'fail.title.ENGINE_UNAVAILABLE': 'The engine provider failed or could not be reached',
  'fail.advice.ENGINE_UNAVAILABLE':
    'Provider trouble, not the caller’s. The caller may retry later; with “On engine error” set to the fallback action, such runs answer with the fallback action instead.',
  'fail.title.ENGINE_INVALID_REQUEST': 'The engine provider refused the request',
  'fail.advice.ENGINE_INVALID_REQUEST':
    'The message gives the provider’s reason, often the model’s name or the prompt’s size. Check the decision’s engine and model in its settings; the same call fails again until that changes.',
  'fail.title.ENGINE_AUTH_FAILED': 'The engine provider refused the key',
  'fail.advice.ENGINE_AUTH_FAILED': 'Replace the provider key under Engine settings and test it there; the same call fails again until then.',
  'fail.title.ENGINE_ERROR': 'The engine’s answer did not fit the decision',
  'fail.advice.ENGINE_ERROR':
    'The model answered outside the questions’ contract (an answer missing or not among the options). The caller may retry once; if it repeats, make the questions’ instructions and options clearer.',
  'fail.title.SERVICE_UNAVAILABLE': 'The run ran out of time before it could answer',
  'fail.advice.SERVICE_UNAVAILABLE': 'The caller’s request ended (it gave up, or its deadline passed) before the run finished. The caller may retry later.',
  'fail.title.INTERNAL_ERROR': 'The service failed unexpectedly',
  'fail.advice.INTERNAL_ERROR': 'Nothing the caller did. The caller may retry; if it keeps failing, quote the request id above to support.',
  'fail.title.other': 'The run failed with {code}',
  'fail.advice.other': 'The message below says what happened.',
};
