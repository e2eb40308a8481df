import { churnRisk } from './churn-risk';
import { codeChangeRisk } from './code-change-risk';
import { contentModeration } from './content-moderation';
import { fraudScreening } from './fraud-screening';
import { incidentSeverity } from './incident-severity';
import { kycReview } from './kyc-review';
import { leadQualification } from './lead-qualification';
import { refundApproval } from './refund-approval';
import { supportTriage } from './support-triage';
import type { Template } from './template';

export { templateSummary, type Template, type TemplateSummary } from './template';

/** The nine built-in templates, in the order the catalogue lists them. */
export const TEMPLATES: Template[] = [
  supportTriage,
  refundApproval,
  fraudScreening,
  contentModeration,
  leadQualification,
  kycReview,
  churnRisk,
  incidentSeverity,
  codeChangeRisk,
];
