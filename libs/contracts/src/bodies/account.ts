import { z } from 'zod';
import { API_KEY_MODES } from '../public-api';
import { text } from './parse-body';

// The bodies of sign-up, sign-in codes, workspaces, members, invitations and API keys (`/app/v1`). Unknown keys
// are ignored, as they always were. A body checked before anything is looked up is parsed in its controller;
// sign-up and the code requests are parsed after the credential ceilings, in their service, with these schemas.

/** The one shape of an e-mail address the gateway accepts: a local part and a domain, no white space. */
export const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

const EMAIL_MESSAGE = 'must be an e-mail address';
const NAME_MESSAGE = 'must be 1 to 80 characters';
/** The roles a member may be given below Owner, as invitations, additions and role changes name them. */
export const GRANTED_ROLES = ['admin', 'member', 'viewer', 'reviewer'] as const;
export type GrantedRole = (typeof GRANTED_ROLES)[number];
const ROLE_MESSAGE = 'must be admin, member, viewer or reviewer';
const OWNER_MESSAGE = 'must be the user id of a member';
const PASSWORD_LENGTH = 'must be 10 to 128 characters';
const PASSWORD_MIX = 'must contain letters and numbers';

const email = z.string({ error: EMAIL_MESSAGE }).regex(EMAIL_PATTERN, { error: EMAIL_MESSAGE });
/** A role below Owner: the Owner's role changes only by transferring ownership. */
const role = z.enum(GRANTED_ROLES, { error: ROLE_MESSAGE });

/** 10 to 128 characters with letters and numbers. */
export const PASSWORD = text(10, 128, PASSWORD_LENGTH)
  .regex(/[A-Za-z]/, { error: PASSWORD_MIX, abort: true })
  .regex(/[0-9]/, { error: PASSWORD_MIX });

/** POST /app/v1/auth/sign-up. */
export const SIGN_UP_BODY = z.object({ email, password: PASSWORD, name: text(1, 80, NAME_MESSAGE, { blank: false }) });

/** POST /app/v1/auth/sign-in-codes and /app/v1/auth/password-resets: where to send a code. */
export const CODE_REQUEST_BODY = z.object({ email });

/** POST /app/v1/auth/password-resets/verify: the new password; a wrong e-mail or code is refused as a wrong code. */
export const NEW_PASSWORD_BODY = z.object({ password: PASSWORD });

/** POST /app/v1/workspaces. */
export const WORKSPACE_BODY = z.object({ name: text(1, 80, NAME_MESSAGE, { blank: false }) });

/** POST /app/v1/workspaces/{ws}/members: an existing account, found by its e-mail. */
export const MEMBER_BODY = z.object({ email: z.string({ error: EMAIL_MESSAGE }).min(1, { error: EMAIL_MESSAGE }), role });

/** PUT /app/v1/workspaces/{ws}/members/{user}. */
export const MEMBER_ROLE_BODY = z.object({ role });

/** POST /app/v1/workspaces/{ws}/ownership. */
export const NEW_OWNER_BODY = z.object({ user_id: z.string({ error: OWNER_MESSAGE }).min(1, { error: OWNER_MESSAGE }) });

/** POST /app/v1/workspaces/{ws}/invitations. */
export const INVITATION_BODY = z.object({ email, role });

/** POST /app/v1/invitations/preview and /accept: the token as the link carries it. */
export const INVITATION_TOKEN_BODY = z.object({ token: text(1, 256, 'must be the token of the invitation link') });

/** POST /app/v1/workspaces/{ws}/api-keys. */
export const API_KEY_BODY = z.object({ name: text(1, 80, NAME_MESSAGE), mode: z.enum(API_KEY_MODES, { error: 'must be live or test' }) });
