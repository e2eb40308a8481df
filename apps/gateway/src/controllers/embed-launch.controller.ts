import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { clearedEmbedCookie, clearedEmbedHintCookie, embedCookie, embedHintCookie, setFrameAncestors } from '../embed/embed-cookie';
import { reopenPage } from '../embed/reopen-page';
import { PublicRoute } from '../http/access';
import { RequestId } from '../http/request-lifecycle';

/**
 * The launch URL of an embed session (under APP_URL): the one-time ticket becomes the session's cookie and the
 * frame moves on to the session's start path. A ticket that cannot be used any more shows the "reopen" page.
 */
@Controller('embed')
export class EmbedLaunchController {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  @Get('launch')
  @PublicRoute()
  async launch(@RequestId() requestId: string, @Query('ticket') ticket: unknown, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    // The ticket is in the URL: it must not be cached or sent onward as a referrer.
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    // A HEAD (a link preview, a scanner) must not spend the one load the ticket allows.
    if (request.method === 'HEAD') return reply.status(200).header('content-type', 'text/html; charset=utf-8').send();
    const redeemed = typeof ticket === 'string' ? await this.rpc.call(SUBJECTS.partner.redeemTicket, { ticket }, { requestId }) : null;
    if (redeemed && redeemed.token !== null) {
      setFrameAncestors(reply, redeemed.session.origins);
      return reply
        .status(302)
        .header('set-cookie', [embedCookie(redeemed.token, redeemed.session.expiresAt), embedHintCookie(redeemed.session.expiresAt)])
        .header('location', redeemed.session.startPath)
        .send();
    }
    // A known session's page may still be framed by its own origins; an unknown ticket's page has nothing to protect.
    if (redeemed) setFrameAncestors(reply, redeemed.origins);
    return this.ended(reply);
  }

  /** Where the embedded editor goes when its session ends while it is open. */
  @Get('ended')
  @PublicRoute()
  endedPage(@Res() reply: FastifyReply) {
    reply.header('cache-control', 'no-store');
    return this.ended(reply);
  }

  private ended(reply: FastifyReply) {
    return reply
      .status(410)
      .header('set-cookie', [clearedEmbedCookie(), clearedEmbedHintCookie()])
      .header('content-type', 'text/html; charset=utf-8')
      .send(reopenPage());
  }
}
