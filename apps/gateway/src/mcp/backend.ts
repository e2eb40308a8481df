import {
  ListDecisionsReply,
  ListExecutionsReply,
  ListExecutionsRequest,
  ListReviewsRequest,
  ReviewListReply,
  ReviewResolvedReply,
  RunDecisionRequest,
  ServiceError,
  SUBJECTS,
} from '@ds/contracts';
import { DecisionContract } from '@ds/decision-schema';
import { RpcClient } from '@ds/platform';
import { AuthenticatedKey } from '../auth/api-keys.service';
import { GatewayConfig } from '../config';
import { RateLimiter } from '../limits/rate-limiter';
import { allowed, retryAfterSeconds } from '../limits/windows';
import { accountBody } from '../workspaces/account';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { ToolBackend } from './tools';

export interface BackendServices {
  rpc: RpcClient;
  workspaces: WorkspacesService;
  rateLimiter: RateLimiter;
  config: GatewayConfig;
}

/** The tools' calls for one API key: the same NATS requests, window and body the REST routes use. */
export class GatewayToolBackend implements ToolBackend {
  constructor(
    private readonly services: BackendServices,
    private readonly key: AuthenticatedKey,
    private readonly requestId: string,
  ) {}

  account(): Promise<Record<string, unknown>> {
    return accountBody(this.services.workspaces, this.services.rpc, this.key, this.requestId);
  }

  listDecisions(): Promise<ListDecisionsReply> {
    return this.services.rpc.call(SUBJECTS.runner.listDecisions, { workspaceId: this.key.workspaceId }, { requestId: this.requestId });
  }

  contract(slug: string): Promise<DecisionContract> {
    return this.services.rpc.call(SUBJECTS.runner.getContract, { workspaceId: this.key.workspaceId, slug }, { requestId: this.requestId });
  }

  async countRun(): Promise<void> {
    const window = await this.services.rateLimiter.count(this.key.workspaceId, 'decisions', this.requestId);
    if (allowed(window)) return;
    const retryAfter = retryAfterSeconds(window, Math.floor(Date.now() / 1000));
    throw new ServiceError('RATE_LIMITED', `The workspace used its ${window.limit} decisions of this minute; retry after the window resets.`, { retryAfter });
  }

  async run(slug: string, state: unknown, includeProbabilities: boolean, version: number | null): Promise<string> {
    const request: RunDecisionRequest = {
      workspaceId: this.key.workspaceId,
      slug,
      body: { state },
      includeProbabilities,
      source: 'mcp',
      livemode: this.key.mode === 'live',
      apiKeyId: this.key.keyId,
      version,
    };
    const reply = await this.services.rpc.call(SUBJECTS.runner.run, request, { timeoutMs: this.services.config.runReplyTimeoutMs, requestId: this.requestId });
    return reply.body;
  }

  listExecutions(query: Omit<ListExecutionsRequest, 'workspaceId'>): Promise<ListExecutionsReply> {
    return this.services.rpc.call(SUBJECTS.runner.listExecutions, { workspaceId: this.key.workspaceId, ...query }, { requestId: this.requestId });
  }

  listReviews(query: Omit<ListReviewsRequest, 'workspaceId'>): Promise<ReviewListReply> {
    return this.services.rpc.call(SUBJECTS.runner.listReviews, { workspaceId: this.key.workspaceId, ...query }, { requestId: this.requestId });
  }

  /** The key is the reviewer: its id is who resolved the item. */
  resolveReview(reviewId: string, body: Record<string, unknown>): Promise<ReviewResolvedReply> {
    return this.services.rpc.call(
      SUBJECTS.runner.resolveReview,
      { workspaceId: this.key.workspaceId, reviewId, userId: this.key.keyId, body },
      { requestId: this.requestId },
    );
  }
}
