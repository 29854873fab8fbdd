/**
 * Local eslint rules for the layer rules of docs/architecture.md that an import pattern cannot
 * express. Both read types (typed linting): they recognise what a value is, not what it is named,
 * so `app.get(...)` on a FastifyInstance is a route and `cache.get(...)` on a Map is not.
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

export default {
  meta: { name: 'layers' },
  rules: {
    'routes-in-route-files': routesInRouteFiles,
    'engine-branches-in-dialect': engineBranchesInDialect,
  },
};
