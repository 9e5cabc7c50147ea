#!/usr/bin/env node
// The mediaforge CLI: runs the TypeScript sources through tsx's loader (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../runtime/cli/main.ts');
