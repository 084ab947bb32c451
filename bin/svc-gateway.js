#!/usr/bin/env node
import '../dist/runtime/node/cli.js';
