import type { Type } from '@nestjs/common';

/** The business modules, each adding itself here (one line per module). */
export const FEATURE_MODULES: Type[] = [];
