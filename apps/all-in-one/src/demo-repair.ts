import { Template, validateSchema, validateState } from '@ds/decision-schema';

/** What the launcher reads of the demo decision (the application API's decision details). */
export interface DemoDecisionState {
  revision: number;
  active_version: number | null;
  endpoint_enabled: boolean;
  active_schema: unknown;
}

export interface DemoDecisionRepair {
  /** Save the template's schema as the draft and deploy it: there is no active version, or it refuses the sample. */
  redeployTemplate: boolean;
  /** Turn the decision's endpoint back on. */
  enableEndpoint: boolean;
}

/**
 * The least that makes the printed `curl` answer 200 again: a version deployed by hand that still accepts the
 * template's sample state is kept, so edits made in the application survive a restart; only a decision that lost
 * its deployed version, or whose version refuses the sample, gets the template deployed again.
 */
export function demoDecisionRepair(decision: DemoDecisionState, template: Pick<Template, 'sample_state'>): DemoDecisionRepair {
  return {
    redeployTemplate: decision.active_version === null || !acceptsSample(decision.active_schema, template.sample_state),
    enableEndpoint: !decision.endpoint_enabled,
  };
}

function acceptsSample(schema: unknown, sampleState: unknown): boolean {
  const validated = validateSchema(schema);
  return validated.valid && validateState(validated.schema, sampleState).ok;
}

/** Whether a workspace name is one the launcher gave a demo workspace, now ("Demo") or in earlier versions ("Demo <date>"). */
export function isDemoWorkspaceName(name: string): boolean {
  return name === 'Demo' || /^Demo \d{4}-\d{2}-\d{2}T/.test(name);
}
