import fs from 'node:fs';

/*
 * Rules of docs/architecture.md that no stock ESLint rule states, checked on every `npm run check`
 * (test/foundation/lint-rules.test.ts plants a violation of each).
 */

/** The webhook tables, as src/db/schema.ts declares them in `DB`. */
const WEBHOOK_TABLES = [
  ...fs.readFileSync(new URL('./src/db/schema.ts', import.meta.url), 'utf8').matchAll(/^\s+(webhook_\w+):/gm),
].map((m) => m[1]);
const WEBHOOK_TABLE = new RegExp(`\\b(${WEBHOOK_TABLES.join('|')})\\b`);

/** Everything about webhooks lives in src/modules/webhooks: no other file names one of its tables. */
const noWebhookTables = {
  meta: {
    type: 'problem',
    messages: {
      table:
        '"{{table}}" belongs to src/modules/webhooks: call what it exports (the composition root hands plumbing what it needs).',
    },
    schema: [],
  },
  create(context) {
    const check = (node, text) => {
      const match = typeof text === 'string' ? WEBHOOK_TABLE.exec(text) : null;
      if (match) context.report({ node, messageId: 'table', data: { table: match[1] } });
    };
    return {
      Literal: (node) => check(node, node.value),
      TemplateElement: (node) => check(node, node.value.cooked),
    };
  },
};

/** Wake-ups are registered with scope.afterCommit where work is queued; nobody calls notify by hand. */
const noNotify = {
  meta: {
    type: 'problem',
    messages: {
      notify:
        'Register the wake-up where the work is queued: scope.afterCommit(channel) sends it once the commit succeeded.',
    },
    schema: [],
  },
  create(context) {
    return {
      CallExpression(node) {
        const { callee } = node;
        const name =
          callee.type === 'Identifier'
            ? callee.name
            : callee.type === 'MemberExpression' && !callee.computed
              ? callee.property.name
              : null;
        if (name === 'notify') context.report({ node, messageId: 'notify' });
      },
    };
  },
};

export const localRules = { rules: { 'no-webhook-tables': noWebhookTables, 'no-notify': noNotify } };
