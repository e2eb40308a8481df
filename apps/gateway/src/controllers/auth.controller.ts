import { Body, Controller, Get, Headers, HttpCode, Ip, Post, Req } from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { SessionsService } from '../auth/sessions.service';
import { SignInCodesService } from '../auth/sign-in-codes.service';
import { bearerToken } from '../auth/tokens';
import { ApplicationEntry } from '../http/access';
import { objectBody } from '../http/request-lifecycle';

/** The application's doors: signing up, in (by password or by a code sent by e-mail) and out. */
@Controller('app/v1/auth')
export class AuthController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly signInCodes: SignInCodesService,
  ) {}

  @Post('sign-up')
  @ApplicationEntry()
  signUp(@Ip() address: string, @Headers('user-agent') userAgent: string | undefined, @Body() body: unknown) {
    return this.sessions.signUp(objectBody(body), address, userAgent ?? null);
  }

  @Post('sign-in')
  @ApplicationEntry()
  @HttpCode(200)
  signIn(@Ip() address: string, @Headers('user-agent') userAgent: string | undefined, @Body() body: unknown) {
    return this.sessions.signIn(objectBody(body), address, userAgent ?? null);
  }

  /** How this installation lets people sign in: the web application offers a code only when e-mail goes out. */
  @Get('methods')
  @ApplicationEntry()
  signInMethods() {
    return this.signInCodes.methods();
  }

  @Post('sign-in-codes')
  @ApplicationEntry()
  @HttpCode(202)
  requestSignInCode(@Ip() address: string, @Body() body: unknown) {
    return this.signInCodes.request(objectBody(body), address);
  }

  @Post('sign-in-codes/verify')
  @ApplicationEntry()
  @HttpCode(200)
  signInWithCode(@Ip() address: string, @Headers('user-agent') userAgent: string | undefined, @Body() body: unknown) {
    return this.signInCodes.verify(objectBody(body), address, userAgent ?? null);
  }

  @Post('sign-out')
  @ApplicationEntry()
  @HttpCode(204)
  async signOut(@Req() request: FastifyRequest) {
    const token = bearerToken(request.headers.authorization);
    if (token) await this.sessions.signOut(token);
  }
}
