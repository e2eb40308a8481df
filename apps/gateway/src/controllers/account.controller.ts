import { Body, Controller, Delete, Get, Headers, HttpCode, Ip, Param, Post, Req } from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { ServiceError } from '@ds/contracts';
import { SessionsService } from '../auth/sessions.service';
import { SignInCodesService } from '../auth/sign-in-codes.service';
import { bearerToken } from '../auth/tokens';
import { ApplicationEntry, SignedIn, UserId } from '../http/access';
import { objectBody } from '../http/request-lifecycle';

/** The signed-in user's own account: its address's verification, its sessions, and resetting a forgotten password. */
@Controller('app/v1/auth')
export class AccountController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly codes: SignInCodesService,
  ) {}

  @Get('account')
  @SignedIn()
  account(@UserId() userId: string) {
    return this.sessions.account(userId);
  }

  @Post('password-resets')
  @ApplicationEntry()
  @HttpCode(202)
  requestPasswordReset(@Ip() address: string, @Body() body: unknown) {
    return this.codes.requestPasswordReset(objectBody(body), address);
  }

  @Post('password-resets/verify')
  @ApplicationEntry()
  @HttpCode(200)
  resetPassword(@Ip() address: string, @Headers('user-agent') userAgent: string | undefined, @Body() body: unknown) {
    return this.codes.resetPassword(objectBody(body), address, userAgent ?? null);
  }

  @Post('email-verification')
  @SignedIn()
  @HttpCode(202)
  requestVerification(@UserId() userId: string) {
    return this.codes.requestVerification(userId);
  }

  @Post('email-verification/verify')
  @SignedIn()
  @HttpCode(200)
  verifyAddress(@UserId() userId: string, @Req() request: FastifyRequest, @Body() body: unknown) {
    return this.codes.verifyAddress(userId, sessionToken(request), objectBody(body));
  }

  @Get('sessions')
  @SignedIn()
  listSessions(@UserId() userId: string, @Req() request: FastifyRequest) {
    return this.sessions.list(userId, sessionToken(request));
  }

  @Delete('sessions/:id')
  @SignedIn()
  @HttpCode(204)
  async endSession(@UserId() userId: string, @Param('id') id: string) {
    await this.sessions.end(userId, id);
  }

  @Post('sessions/revoke-others')
  @SignedIn()
  @HttpCode(200)
  endOtherSessions(@UserId() userId: string, @Req() request: FastifyRequest) {
    return this.sessions.endOthers(userId, sessionToken(request));
  }
}

/** The bearer token the edge authenticated this user by (application sessions travel only in that header). */
function sessionToken(request: FastifyRequest): string {
  const token = bearerToken(request.headers.authorization);
  if (token === null) throw new ServiceError('UNAUTHORIZED', 'Sign in first: no session was sent.');
  return token;
}
