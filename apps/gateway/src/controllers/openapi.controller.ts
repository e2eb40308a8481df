import { Controller, Get, Header, Inject, Param } from '@nestjs/common';
import { ServiceError, SUBJECTS } from '@ds/contracts';
import { isValidSlug } from '@ds/decision-schema';
import { decisionOpenApiDocument, openApiDocument, type OpenApiDocument } from '@ds/openapi';
import { PLATFORM, RpcClient } from '@ds/platform';
import { AuthenticatedKey } from '../auth/api-keys.service';
import { GatewayConfig } from '../config';
import { ApiKey, ApiKeyRoute, PublicRoute } from '../http/access';
import { RequestId } from '../http/request-lifecycle';

/** The OpenAPI 3.1 description of the public API, and the same narrowed to one decision's active version. */
@Controller()
export class OpenApiController {
  /** Serialised once: the document depends only on the code and BASE_URL. */
  private readonly document: string;

  constructor(
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    @Inject(PLATFORM.config) private readonly config: GatewayConfig,
  ) {
    this.document = JSON.stringify(openApiDocument({ serverUrl: config.baseUrl }));
  }

  @Get('openapi.json')
  @PublicRoute()
  @Header('content-type', 'application/json; charset=utf-8')
  @Header('cache-control', 'public, max-age=300')
  describe(): string {
    return this.document;
  }

  @Get('v1/decisions/:slug/openapi.json')
  @ApiKeyRoute('reads')
  async describeDecision(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string, @Param('slug') slug: string): Promise<OpenApiDocument> {
    if (!isValidSlug(slug)) throw new ServiceError('DECISION_NOT_FOUND', 'No decision with this slug in this workspace.');
    const contract = await this.rpc.call(SUBJECTS.runner.getContract, { workspaceId: key.workspaceId, slug }, { requestId });
    return decisionOpenApiDocument({ serverUrl: this.config.baseUrl }, contract);
  }
}
