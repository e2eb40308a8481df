export { checkOutcome, type Outcome, type OutcomeValue, type OutcomeCheck } from './outcome';
export { outcomeLabels, truthIndex, type QualityLabel, type RecordedDistributions } from './labels';
export { qualityReport, type QualityCell, type QualityReport, type QuestionQuality, type SourceQuality } from './report';
export { BIN_COUNT, THRESHOLD_STEPS, binOf, stepOf, binSumsOf, binsOf, expectedCalibrationError, thresholdsOf, type Bin, type Threshold } from './bins';
export { PROBABILITY_FLOOR, calibrateDistribution, calibrateDistributions } from './calibration';
export { fitQuestion, MIN_OUTCOMES_TO_FIT, FOLDS, type FitSample, type QuestionFit } from './fit';
export { reportTerms, DAY_MS, HOUR_MS, type ReportTerm } from './ranges';
export {
  FIT_SAMPLE_MAX,
  FIT_DAILY_CAP,
  FIT_LEASE_SECONDS,
  fitDailyCap,
  fitCalibration,
  fitRestSeconds,
  FIT_REST_FACTOR,
  secondsUntilNextUtcDay,
  type CalibrationFit,
  type LabelledExecution,
  type NotFitted,
} from './fit-run';
export {
  auditReport,
  wilsonInterval,
  Z_95,
  type AuditedAccuracy,
  type AuditedCell,
  type AuditInput,
  type AuditReport,
  type AuditThreshold,
  type Interval,
  type ItemConfidence,
  type QuestionAudit,
} from './audit';
