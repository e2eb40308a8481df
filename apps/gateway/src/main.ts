import 'reflect-metadata';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PLATFORM, runServiceMain, ServiceDefinition, WorkspaceDeletions } from '@ds/platform';
import { ApiKeysService } from './auth/api-keys.service';
import { PasswordHasher } from './auth/passwords';
import { SessionPurge } from './auth/session-purge';
import { CREDENTIAL_LIMITS, PASSWORDS, SessionsService } from './auth/sessions.service';
import { appAddressWarning } from './app-address';
import { GatewayConfig, readGatewayConfig } from './config';
import { AdminController } from './controllers/admin.controller';
import { ApiKeysController } from './controllers/api-keys.controller';
import { AuthController } from './controllers/auth.controller';
import { BillingController } from './controllers/billing.controller';
import { DecisionsController } from './controllers/decisions.controller';
import { ExecutionsController } from './controllers/executions.controller';
import { MembersController } from './controllers/members.controller';
import { QualityController } from './controllers/quality.controller';
import { ReviewsController } from './controllers/reviews.controller';
import { ShadowController } from './controllers/shadow.controller';
import { TemplatesController } from './controllers/templates.controller';
import { VersionsController } from './controllers/versions.controller';
import { WorkspacesController } from './controllers/workspaces.controller';
import { ReplaysController } from './controllers/replays.controller';
import { InvitationsController } from './controllers/invitations.controller';
import { DeliveriesController } from './controllers/deliveries.controller';
import { SecretsController } from './controllers/secrets.controller';
import { EmbedLaunchController } from './controllers/embed-launch.controller';
import { EngineSettingsController } from './controllers/engine-settings.controller';
import { HooksController } from './controllers/hooks.controller';
import { OpenApiController } from './controllers/openapi.controller';
import { PartnerController } from './controllers/partner.controller';
import { PublicController } from './controllers/public.controller';
import { WebController } from './controllers/web.controller';
import { ApiKeyEntity, MembershipEntity, SessionEntity, UserEntity, WorkspaceEntity } from './entities';
import { BODY_LIMIT, installRequestLifecycle, requestIdFrom } from './http/request-lifecycle';
import { RouteTable } from './http/route-table';
import { HookTokens } from './hooks/hook-tokens';
import { HookProofLimits } from './hooks/proof-limits';
import { IdempotencyService } from './idempotency/idempotency.service';
import { CredentialLimits } from './limits/credential-limits';
import { RateLimiter } from './limits/rate-limiter';
import { SessionPacing } from './limits/session-pacing';
import { openRateLimitStore, RateLimitStore } from './limits/storage';
import { Idempotency1763790000000 } from './migrations/1763790000000-idempotency';
import { HttpErrorFilter } from './http/errors';
import { McpController } from './mcp/mcp.controller';
import { Initial1763780000000 } from './migrations/1763780000000-initial';
import { RetentionIndexes1764400000000 } from './migrations/1764400000000-retention-indexes';
import { UnknownEmailSignIns1795500000000 } from './migrations/1795500000000-unknown-email-sign-ins';
import { Invitations1795700000000 } from './migrations/1795700000000-invitations';
import { WorkspacesService } from './workspaces/workspaces.service';
import { MAILER, openMailer } from './mail/mailer';
import { SignInCodesService } from './auth/sign-in-codes.service';
import { SignInCodes1795800000000 } from './migrations/1795800000000-sign-in-codes';
import { VerifiedAddresses1796041733120 } from './migrations/1796041733120-verified-addresses';
import { AccountController } from './controllers/account.controller';
import { ApiKeyHints1796000374215 } from './migrations/1796000374215-api-key-hints';
import { SessionActivity1796100000000 } from './migrations/1796100000000-session-activity';
import { ReviewerRole1796500000000 } from './migrations/1796500000000-reviewer-role';
import { WorkspaceDeletionService } from './workspaces/workspace-deletion.service';
import { InvitationsService } from './workspaces/invitations.service';

const RATE_LIMIT_STORE = Symbol('rate-limit-store');
const ENTITIES = [UserEntity, SessionEntity, WorkspaceEntity, MembershipEntity, ApiKeyEntity];

class GatewayModule {}

export const gateway: ServiceDefinition<GatewayConfig> = {
  name: 'gateway',
  database: {
    schema: 'gateway',
    entities: ENTITIES,
    migrations: [
      Initial1763780000000,
      Idempotency1763790000000,
      RetentionIndexes1764400000000,
      UnknownEmailSignIns1795500000000,
      Invitations1795700000000,
      SignInCodes1795800000000,
      VerifiedAddresses1796041733120,
      ApiKeyHints1796000374215,
      SessionActivity1796100000000,
      ReviewerRole1796500000000,
    ],
  },
  readConfig: readGatewayConfig,
  module: (runtime) => ({
    module: GatewayModule,
    imports: [TypeOrmModule.forFeature(ENTITIES)],
    // Without an operator token the operator API does not exist at all: its routes are never registered.
    controllers: [
      PublicController,
      OpenApiController,
      McpController,
      AuthController,
      WorkspacesController,
      BillingController,
      MembersController,
      TemplatesController,
      ApiKeysController,
      DecisionsController,
      VersionsController,
      ShadowController,
      ExecutionsController,
      QualityController,
      ReviewsController,
      ReplaysController,
      AccountController,
      InvitationsController,
      EngineSettingsController,
      HooksController,
      DeliveriesController,
      SecretsController,
      PartnerController,
      EmbedLaunchController,
      WebController,
      ...(runtime.config.adminToken === null ? [] : [AdminController]),
    ],
    providers: [
      RouteTable,
      SessionsService,
      SignInCodesService,
      SessionPurge,
      WorkspacesService,
      WorkspaceDeletionService,
      InvitationsService,
      ApiKeysService,
      IdempotencyService,
      {
        provide: RATE_LIMIT_STORE,
        useFactory: () => openRateLimitStore(runtime.config.rateLimitStore, runtime.config.redisUrl, runtime.logger),
      },
      {
        provide: RateLimiter,
        inject: [RATE_LIMIT_STORE],
        useFactory: (store: RateLimitStore) => new RateLimiter(store.windows, runtime.rpc, runtime.nats, runtime.config.rateLimitKeyPrefix),
      },
      {
        provide: CREDENTIAL_LIMITS,
        inject: [RATE_LIMIT_STORE],
        useFactory: (store: RateLimitStore) =>
          new CredentialLimits(store.storage, runtime.config.credentialLimits, runtime.config.rateLimitKeyPrefix, runtime.logger),
      },
      { provide: PASSWORDS, useFactory: () => new PasswordHasher(runtime.config.passwordScryptN) },
      { provide: MAILER, useFactory: () => openMailer(runtime.config.smtpUrl, runtime.config.mailFrom, runtime.logger) },
      HookTokens,
      {
        provide: HookProofLimits,
        inject: [RATE_LIMIT_STORE],
        useFactory: (store: RateLimitStore) => new HookProofLimits(store.storage, runtime.config.rateLimitKeyPrefix, runtime.logger, store.blockedMs),
      },
    ],
  }),
  opsDocuments: (app) => new Map([['/routes', () => ({ routes: app.get(RouteTable).list() })]]),
  readiness: (app) => {
    const ping = app.get<RateLimitStore>(RATE_LIMIT_STORE).ping;
    const checks: Record<string, () => Promise<boolean>> = {};
    if (ping) checks.redis = ping;
    return checks;
  },
  background: async (app, runtime) => {
    const addressWarning = appAddressWarning(runtime.config);
    if (addressWarning) runtime.logger.warn(addressWarning);
    const deletion = app.get(WorkspaceDeletionService);
    const deletions = new WorkspaceDeletions(runtime.nats.connection, 'gateway', (event) => deletion.removeHere(event.workspaceId), runtime.logger);
    await deletions.start();
    return { stop: () => deletions.stop() };
  },
  http: {
    port: (config) => config.port,
    bodyLimit: BODY_LIMIT,
    requestTimeoutMs: (config) => config.requestTimeoutMs,
    genReqId: (request) => requestIdFrom(request.headers['x-request-id']),
    trustedProxies: (config) => config.trustedProxies,
    configure: (app, runtime) => {
      installRequestLifecycle(app, {
        config: runtime.config,
        apiKeys: app.get(ApiKeysService),
        sessions: app.get(SessionsService),
        credentialLimits: app.get(CREDENTIAL_LIMITS),
        workspaces: app.get(WorkspacesService),
        routes: app.get(RouteTable),
        rateLimiter: app.get(RateLimiter),
        sessionPacing: new SessionPacing(runtime.config.sessionPace, runtime.metrics),
        hookTokens: app.get(HookTokens),
        hookProofLimits: app.get(HookProofLimits),
        metrics: runtime.metrics,
        rpc: runtime.rpc,
      });
      app.useGlobalFilters(new HttpErrorFilter(app.get(PLATFORM.logger)));
    },
  },
};

if (require.main === module) void runServiceMain(gateway);
