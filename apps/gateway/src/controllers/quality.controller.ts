import { Body, Controller, Get, HttpCode, Inject, Param, Post, Put, Query } from '@nestjs/common';
import { ServiceError, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { MemberWorkspace, WorkspaceRole } from '../http/access';
import { objectBody, RequestId } from '../http/request-lifecycle';

/** What turned out to be right (outcomes), whether the confidences held (the quality report), and the calibration fitted to them. */
@Controller('app/v1/workspaces/:ws')
export class QualityController {
  /** Workspaces with a calibration fit this replica is waiting on. */
  private readonly fitsInFlight = new Set<string>();

  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  /** A person reviewing an execution records what was right; embedded editors need the permission to edit decisions. */
  @Put('executions/:id/outcome')
  @WorkspaceRole('member', 'decisions:write')
  recordOutcome(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Body() body: unknown) {
    return this.rpc.call(SUBJECTS.runner.recordOutcome, { workspaceId: ws, executionId: id, body: objectBody(body) }, { requestId });
  }

  @Get('decisions/:id/quality')
  @WorkspaceRole('viewer', 'decisions:read')
  quality(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(
      SUBJECTS.runner.qualityReport,
      { workspaceId: ws, decisionId: id, version: query.version, from: query.from, to: query.to },
      { requestId },
    );
  }

  @Post('decisions/:id/calibration')
  @WorkspaceRole('member', 'decisions:write')
  @HttpCode(200)
  async fitCalibration(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Body() body: unknown) {
    const version = objectBody(body).version;
    // The runner refuses a second fit of a workspace across every replica; one this gateway is waiting on is
    // refused here, so that a loop of refused fits never reaches NATS or the runner.
    if (this.fitsInFlight.has(ws)) throw new ServiceError('CONFLICT', 'A calibration fit of this workspace is running; try again when it has finished.');
    this.fitsInFlight.add(ws);
    try {
      return await this.rpc.call(SUBJECTS.runner.fitCalibration, { workspaceId: ws, decisionId: id, version }, { requestId });
    } finally {
      this.fitsInFlight.delete(ws);
    }
  }
}
