import fs from 'node:fs';

/**
 * Local eslint rules for the layer rules of docs/architecture.md that an import pattern cannot
 * express. The first two read types (typed linting): they recognise what a value is, not what it
 * is named, so `app.get(...)` on a FastifyInstance is a route and `cache.get(...)` on a Map is not.
 * The last two read names: a webhook table's, and `notify`.
 */

/** Fastify methods that add routes to an instance, or plugins (which may add routes). */
const ROUTE_REGISTRATIONS = new Set([
  'route',
  'get',
  'head',
  'post',
  'put',
  'patch',
  'delete',
  'options',
  'all',
  'register',
]);
const ENGINES = new Set(['sqlite', 'postgres']);
const EQUALITY = new Set(['===', '!==', '==', '!=']);

const typeOf = (context, node) => context.sourceCode.parserServices.getTypeAtLocation(node);

/** Whether `predicate` holds for the type or any member of its union or intersection. */
function anyPart(type, predicate) {
  return type.isUnionOrIntersection() ? type.types.some((part) => anyPart(part, predicate)) : predicate(type);
}

function isFastifyInstance(type) {
  return anyPart(type, (part) => {
    const symbol = part.getSymbol();
    return (
      symbol?.getName() === 'FastifyInstance' &&
      (symbol.getDeclarations() ?? []).some((d) =>
        /[\\/]node_modules[\\/]fastify[\\/]/.test(d.getSourceFile().fileName),
      )
    );
  });
}

/** An engine name ('sqlite' | 'postgres'), as a literal or as a value of the Engine type. */
const isEngine = (type) => anyPart(type, (part) => part.isStringLiteral() && ENGINES.has(part.value));

const routesInRouteFiles = {
  meta: {
    type: 'problem',
    docs: { description: 'Routes are registered only in *.routes.ts files, where the layer rules for routes apply.' },
    messages: {
      elsewhere:
        'Register routes (and route plugins) in a *.routes.ts file: there they are held to "HTTP only, call the service" (no queries).',
    },
    schema: [],
  },
  create(context) {
    return {
      CallExpression(node) {
        const { callee } = node;
        if (callee.type !== 'MemberExpression' || callee.computed || callee.property.type !== 'Identifier') return;
        if (!ROUTE_REGISTRATIONS.has(callee.property.name)) return;
        if (isFastifyInstance(typeOf(context, callee.object))) context.report({ node, messageId: 'elsewhere' });
      },
    };
  },
};

const engineBranchesInDialect = {
  meta: {
    type: 'problem',
    docs: { description: 'Code branches on the database engine only in the places eslint.config.js lists.' },
    messages: {
      branch:
        'Branch on the engine (SQLite vs PostgreSQL) in db/dialect.ts: add a function there and call it (eslint.config.js lists the other places allowed).',
    },
    schema: [],
  },
  create(context) {
    const check = (node, operands) => {
      if (operands.some((operand) => isEngine(typeOf(context, operand)))) context.report({ node, messageId: 'branch' });
    };
    return {
      BinaryExpression: (node) => EQUALITY.has(node.operator) && check(node, [node.left, node.right]),
      SwitchStatement: (node) => check(node, [node.discriminant]),
      // A lookup table indexed by the engine is a branch too.
      'MemberExpression[computed=true]': (node) => check(node, [node.property]),
    };
  },
};

/** The webhook tables, as src/db/schema.ts declares them in `DB`. */
const WEBHOOK_TABLES = [
  ...fs.readFileSync(new URL('../src/db/schema.ts', import.meta.url), 'utf8').matchAll(/^\s+(webhook_\w+):/gm),
].map((m) => m[1]);
const WEBHOOK_TABLE = new RegExp(`\\b(${WEBHOOK_TABLES.join('|')})\\b`);

/** Everything about webhooks lives in src/modules/webhooks: no other file names one of its tables. */
const noWebhookTables = {
  meta: {
    type: 'problem',
    docs: { description: 'No file outside src/modules/webhooks names a webhook table.' },
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
    docs: { description: 'Routes, the app and modules never call notify: wake-ups go through scope.afterCommit.' },
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

export default {
  meta: { name: 'layers' },
  rules: {
    'routes-in-route-files': routesInRouteFiles,
    'engine-branches-in-dialect': engineBranchesInDialect,
    'no-webhook-tables': noWebhookTables,
    'no-notify': noNotify,
  },
};
