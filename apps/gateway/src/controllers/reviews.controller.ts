import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { reviewListQuery, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { MemberWorkspace, UserId, WorkspaceRole } from '../http/access';
import { objectBody, RequestId } from '../http/request-lifecycle';

/**
 * Human review (docs/reviews.md): the inbox of runs sent to review, and a reviewer's claim, release and resolution.
 * Reviewers and Members and up; the items show the state runs were called with.
 */
@Controller('app/v1/workspaces/:ws/reviews')
export class ReviewsController {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  /** Oldest due first; without `status`, the items not yet resolved. */
  @Get()
  @WorkspaceRole('reviewer')
  list(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(SUBJECTS.runner.listReviews, { workspaceId: ws, ...reviewListQuery(query) }, { requestId });
  }

  @Get(':id')
  @WorkspaceRole('reviewer')
  get(@RequestId() requestId: string, @MemberWorkspace() ws: string, @UserId() userId: string, @Param('id') id: string) {
    return this.rpc.call(SUBJECTS.runner.getReview, { workspaceId: ws, reviewId: id, userId }, { requestId });
  }

  @Post(':id/claim')
  @WorkspaceRole('reviewer')
  @HttpCode(200)
  claim(@RequestId() requestId: string, @MemberWorkspace() ws: string, @UserId() userId: string, @Param('id') id: string) {
    return this.rpc.call(SUBJECTS.runner.claimReview, { workspaceId: ws, reviewId: id, userId }, { requestId });
  }

  @Post(':id/release')
  @WorkspaceRole('reviewer')
  @HttpCode(200)
  release(@RequestId() requestId: string, @MemberWorkspace() ws: string, @UserId() userId: string, @Param('id') id: string) {
    return this.rpc.call(SUBJECTS.runner.releaseReview, { workspaceId: ws, reviewId: id, userId }, { requestId });
  }

  /** The body is checked by the runner, against the version that answered the run, so every bad path is named at once. */
  @Post(':id/resolve')
  @WorkspaceRole('reviewer')
  @HttpCode(200)
  resolve(@RequestId() requestId: string, @MemberWorkspace() ws: string, @UserId() userId: string, @Param('id') id: string, @Body() body: unknown) {
    return this.rpc.call(SUBJECTS.runner.resolveReview, { workspaceId: ws, reviewId: id, userId, body: objectBody(body) }, { requestId });
  }
}
