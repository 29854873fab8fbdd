#!/usr/bin/env node
// The operator CLI (see README). The TypeScript sources are compiled to dist/ by `npm install`.
import '../dist/main/cli.js';
