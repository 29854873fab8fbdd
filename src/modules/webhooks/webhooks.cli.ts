import { pino } from 'pino';
import { pruneWebhookHistory } from './webhooks.retention.js';
import { secretBoxFor } from './webhooks.secret-box.js';
import { optionalText, positional } from '../../cli/args.js';
import type { CliCommand } from '../../cli/command.js';
import { createDeliveryEngine } from './webhooks.delivery.js';
import * as webhooks from './webhooks.operator.js';
import { DEFAULT_ROTATION_GRACE_HOURS, MAX_ROTATION_GRACE_HOURS } from './webhooks.schemas.js';

export const webhookCommands: CliCommand[] = [
  {
    path: ['webhook', 'list'],
    summary: 'List webhook subscriptions (never their secrets)',
    options: { tenant: { type: 'string' } },
    run: async (ctx, { values }) => ({
      subscriptions: await webhooks.listSubscriptions(ctx.db, { tenantId: optionalText(values, 'tenant') }),
    }),
  },
  {
    path: ['webhook', 'deliveries'],
    summary: 'List deliveries, newest first (--status pending|succeeded|failed)',
    options: {
      tenant: { type: 'string' },
      subscription: { type: 'string' },
      event: { type: 'string' },
      status: { type: 'string' },
      limit: { type: 'string' },
    },
    run: async (ctx, { values }) => ({
      deliveries: await webhooks.listDeliveries(ctx.db, {
        tenantId: optionalText(values, 'tenant'),
        subscriptionId: optionalText(values, 'subscription'),
        eventId: optionalText(values, 'event'),
        status: optionalText(values, 'status'),
        limit: optionalText(values, 'limit')
          ? Math.min(1000, Math.max(1, Number(optionalText(values, 'limit')) || 100))
          : 100,
      }),
    }),
  },
  {
    path: ['webhook', 'attempts'],
    summary: 'List the attempts of a delivery (status, duration, response body excerpt)',
    positionals: 'DELIVERY_ID',
    run: async (ctx, { positionals }) => ({
      attempts: await webhooks.listAttempts(ctx.db, positional(positionals, 'DELIVERY_ID')),
    }),
  },
  {
    path: ['webhook', 'deactivate'],
    summary: 'Deactivate a subscription (its pending deliveries are closed as failed)',
    positionals: 'SUBSCRIPTION_ID',
    run: async (ctx, { positionals }) => ({
      subscription: await webhooks.deactivate(ctx.database, ctx.clock, positional(positionals, 'SUBSCRIPTION_ID')),
    }),
  },
  {
    path: ['webhook', 'reactivate'],
    summary: 'Reactivate a subscription',
    positionals: 'SUBSCRIPTION_ID',
    run: async (ctx, { positionals }) => ({
      subscription: await webhooks.reactivate(ctx.database, ctx.clock, positional(positionals, 'SUBSCRIPTION_ID')),
    }),
  },
  {
    path: ['webhook', 'rotate-secret'],
    summary: 'New signing secret (shown once); the old one keeps signing for --grace-hours (24)',
    positionals: 'SUBSCRIPTION_ID',
    options: { 'grace-hours': { type: 'string' } },
    run: async (ctx, { values, positionals }) => {
      const given = optionalText(values, 'grace-hours');
      const hours = given === undefined ? DEFAULT_ROTATION_GRACE_HOURS : Number(given);
      if (!Number.isFinite(hours) || hours < 0 || hours > MAX_ROTATION_GRACE_HOURS) {
        throw new Error(`--grace-hours must be 0..${MAX_ROTATION_GRACE_HOURS}`);
      }
      return webhooks.rotateSecret(
        ctx.database,
        ctx.clock,
        secretBoxFor(ctx.config),
        positional(positionals, 'SUBSCRIPTION_ID'),
        hours,
      );
    },
  },
  {
    path: ['webhook', 'replay'],
    summary: 'Send again: --event EVT_ID, or every failed delivery --since ISO_TIME (--subscription to narrow)',
    options: { event: { type: 'string' }, since: { type: 'string' }, subscription: { type: 'string' } },
    run: async (ctx, { values }) => {
      const event = optionalText(values, 'event');
      const since = optionalText(values, 'since');
      const subscription = optionalText(values, 'subscription');
      if ((event === undefined) === (since === undefined)) throw new Error('give exactly one of --event or --since');
      return event !== undefined
        ? webhooks.replayEvent(ctx.db, ctx.clock, event, subscription)
        : webhooks.replayFailedSince(ctx.db, ctx.clock, since!, subscription);
    },
  },
  {
    path: ['webhook', 'reencrypt'],
    summary: 'Re-seal every signing secret with the first SECRET_KEY (key rotation)',
    run: async (ctx) => webhooks.reencryptSecrets(ctx.db, secretBoxFor(ctx.config)),
  },
  {
    path: ['webhook', 'prune'],
    summary: 'Delete events, deliveries and attempts older than WEBHOOK_RETENTION_DAYS now',
    run: async (ctx) => pruneWebhookHistory(ctx.db, ctx.clock, ctx.config.webhookRetentionDays),
  },
  {
    path: ['webhook', 'deliver'],
    summary: 'Send every due delivery now, from this process, and exit',
    run: async (ctx) => {
      const { engine, close } = createDeliveryEngine({ ...ctx, logger: pino({ level: 'warn' }) });
      try {
        return { attempted: await engine.drain() };
      } finally {
        close();
      }
    },
  },
];
