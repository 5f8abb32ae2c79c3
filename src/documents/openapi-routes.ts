/**
 * The route table: every call the OpenAPI document describes. The REST routes describe themselves
 * (src/http/routes/, one file each); the admin calls (mounted by admin.ts) and the stream upgrade
 * (src/stream/) are described here. The server hands this list to `buildOpenApi` (openapi.ts).
 */

import { REST_ROUTES } from "../http/route-list.ts";
import type { RouteSpec } from "../http/route-types.ts";
import { emptyArraySchema } from "../wire/document-schemas.ts";
import { LISTEN_KEY_RE } from "../wire/request-schemas.ts";
import {
  adminUserSchema,
  backupSchema,
  feesSchema,
  newKeySchema,
  newUserSchema,
  pairStatusSchema,
  promoteSchema,
  transferSchema,
} from "../wire/schemas.ts";

const ADMIN_POST = [400, 401, 404, 413, 415, 500, 503] as const;

/** Every REST call of docs/API.md 7-11, and the service paths. */
export const ROUTES: readonly RouteSpec[] = [
  ...REST_ROUTES,

  // ---------------------------------------------------------------- docs/API.md 11 admin
  {
    method: "get",
    path: "/admin/fees",
    operationId: "adminFees",
    summary: "The fee account's balances",
    source: "docs/API.md 9, 11",
    auth: "admin",
    ok: feesSchema,
    errors: [401, 404, 500],
  },
  {
    method: "post",
    path: "/admin/users",
    operationId: "adminCreateUser",
    summary: "A new user with a new API key (shown once)",
    source: "docs/API.md 11",
    auth: "admin",
    body: (s) => s.adminUser,
    ok: newUserSchema,
    errors: ADMIN_POST,
  },
  {
    method: "get",
    path: "/admin/users/{uid}",
    operationId: "adminUser",
    summary: "A user's balances and API keys (by their first 8 characters)",
    source: "docs/API.md 11",
    auth: "admin",
    ok: adminUserSchema,
    errors: [401, 404, 500],
  },
  {
    method: "post",
    path: "/admin/api-keys",
    operationId: "adminCreateApiKey",
    summary: "Another API key for a user",
    source: "docs/API.md 11",
    auth: "admin",
    body: (s) => s.adminApiKey,
    ok: newKeySchema,
    errors: ADMIN_POST,
  },
  {
    method: "post",
    path: "/admin/api-keys/revoke",
    operationId: "adminRevokeApiKey",
    summary: "Revoke an API key",
    source: "docs/API.md 11",
    auth: "admin",
    body: (s) => s.adminRevoke,
    ok: emptyArraySchema,
    errors: ADMIN_POST,
  },
  {
    method: "post",
    path: "/admin/deposit",
    operationId: "adminDeposit",
    summary: "Credit a user's available balance",
    source: "docs/API.md 11",
    auth: "admin",
    body: (s) => s.adminDeposit,
    ok: transferSchema,
    errors: ADMIN_POST,
  },
  {
    method: "post",
    path: "/admin/withdraw",
    operationId: "adminWithdraw",
    summary: "Debit a user's available balance (more than available: 400 `errors.amount`)",
    source: "docs/API.md 11",
    auth: "admin",
    body: (s) => s.adminWithdraw,
    ok: transferSchema,
    errors: ADMIN_POST,
  },
  {
    method: "post",
    path: "/admin/pairs/status",
    operationId: "adminPairStatus",
    summary: "Set a pair's status: trading, cancelOnly or halted",
    source: "docs/API.md 11",
    auth: "admin",
    body: (s) => s.adminPairStatus,
    ok: pairStatusSchema,
    errors: ADMIN_POST,
  },
  {
    method: "post",
    path: "/admin/backup",
    operationId: "adminBackup",
    summary: "A consistent copy of the database in the backup folder, answered once it is whole",
    source: "docs/API.md 11",
    auth: "admin",
    body: (s) => s.adminBackup,
    ok: backupSchema,
    errors: ADMIN_POST,
  },
  {
    method: "post",
    path: "/admin/promote",
    operationId: "adminPromote",
    summary:
      "Make this follower the leader: it commits what it received, stops following and accepts orders at the next epoch, answered once it does",
    source: "docs/API.md 11",
    auth: "admin",
    body: (s) => s.adminPromote,
    ok: promoteSchema,
    errors: ADMIN_POST,
  },

  // ---------------------------------------------------------------- service
  {
    method: "get",
    path: "/stream",
    operationId: "stream",
    summary: "WebSocket stream (docs/API.md 12): upgrade with `?streams=<channel>,...`",
    source: "docs/API.md 12, 10",
    auth: "optionalSignedQuery",
    query: [
      {
        name: "streams",
        description:
          "Comma-separated channels (1..100): `exchanges`, `status`, `orders:{pair}`, `history:{pair}`, " +
          "`bbo:{pair}`, `orders_l3:{pair}`, `user_orders:{uid}`, `user_history:{uid}` (user channels need a signed upgrade or a listenKey)",
        schema: { type: "string" },
        required: true,
      },
      {
        name: "listenKey",
        description: "docs/API.md 10: authenticates the upgrade as the key's user instead of the headers",
        schema: { type: "string", pattern: LISTEN_KEY_RE.source },
      },
    ],
    ok: "text",
    errors: [400, 401, 403, 426, 429, 500, 503],
    description:
      "Not a REST call: a WebSocket upgrade (101). Every message is `{stream, data}`; the message " +
      "schemas are in components.schemas (Stream*Message) and, with every channel, in " +
      "/1.0/asyncapi.json. A plain GET answers 426.",
  },
];
