import { Body, Controller, Delete, Get, HttpCode, Inject, Post, Put } from '@nestjs/common';
import { ENGINE_SETTINGS_BODY, EngineSettingsReply, parseBody, PROVIDER_KEY_BODY, PROVIDER_KEY_INVALID, ServiceError, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { MemberWorkspace, WorkspaceRole } from '../http/access';
import { objectBody, RequestId } from '../http/request-lifecycle';

/** A workspace's own engine key and whether its runs use it (Admin: provider keys are settings). */
@Controller('app/v1/workspaces/:ws')
export class EngineSettingsController {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  @Put('provider-key')
  @WorkspaceRole('admin')
  async setProviderKey(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Body() body: unknown) {
    const key = parseBody(PROVIDER_KEY_BODY, body, PROVIDER_KEY_INVALID);
    return this.rpc.call(SUBJECTS.engine.setProviderKey, { workspaceId: ws, provider: key.provider, apiKey: key.api_key }, { requestId });
  }

  /** A test call with the key in the body (not saved by this), or with the saved key when the body names none. */
  @Post('provider-key/test')
  @WorkspaceRole('admin')
  @HttpCode(200)
  async testProviderKey(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Body() body: unknown) {
    const input = body === undefined || body === null ? {} : objectBody(body);
    const key = input.provider === undefined && input.api_key === undefined ? null : parseBody(PROVIDER_KEY_BODY, input, PROVIDER_KEY_INVALID);
    const reply = await this.rpc.call(
      SUBJECTS.engine.testProviderKey,
      key ? { workspaceId: ws, provider: key.provider, apiKey: key.api_key } : { workspaceId: ws },
      { requestId, timeoutMs: 20_000 },
    );
    return { ok: reply.ok, provider: reply.provider, model: reply.model, code: reply.code, reason: reply.reason };
  }

  @Get('provider-key')
  @WorkspaceRole('admin')
  async getProviderKey(@RequestId() requestId: string, @MemberWorkspace() ws: string) {
    const key = await this.rpc.call(SUBJECTS.engine.getProviderKey, { workspaceId: ws }, { requestId });
    if (!key) throw new ServiceError('NOT_FOUND', 'This workspace has no provider key saved.');
    return key;
  }

  @Delete('provider-key')
  @WorkspaceRole('admin')
  @HttpCode(204)
  async deleteProviderKey(@RequestId() requestId: string, @MemberWorkspace() ws: string) {
    const reply = await this.rpc.call(SUBJECTS.engine.deleteProviderKey, { workspaceId: ws }, { requestId });
    if (!reply.deleted) throw new ServiceError('NOT_FOUND', 'This workspace has no provider key saved.');
  }

  @Get('engine-settings')
  @WorkspaceRole('admin')
  async getSettings(@RequestId() requestId: string, @MemberWorkspace() ws: string) {
    return toPublic(await this.rpc.call(SUBJECTS.engine.getSettings, { workspaceId: ws }, { requestId }));
  }

  @Put('engine-settings')
  @WorkspaceRole('admin')
  async setSettings(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Body() body: unknown) {
    const input = parseBody(ENGINE_SETTINGS_BODY, body, 'The engine settings are not valid.');
    return toPublic(
      await this.rpc.call(SUBJECTS.engine.setSettings, { workspaceId: ws, useOwnKey: input.use_own_key, defaultEngine: input.default_engine }, { requestId }),
    );
  }
}

function toPublic(settings: EngineSettingsReply) {
  return {
    use_own_key: settings.useOwnKey,
    provider_key: settings.providerKey,
    llm_provider: settings.llmProvider,
    default_engine: settings.defaultEngine,
    service_default_engine: settings.serviceDefaultEngine,
  };
}
