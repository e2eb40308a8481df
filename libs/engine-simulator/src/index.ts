export { startEngineSimulator, type EngineSimulator, type EngineSimulatorOptions } from './server';
// Types of the control API, for tests that script faults or read recorded requests.
export type { ScriptInput, Step } from './scripts';
export type { RecordedRequest } from './requests';
