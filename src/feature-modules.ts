import type { Type } from '@nestjs/common';
import { PaywayConfigModule } from './payway-config/payway-config.module';

/** The business modules, each adding itself here (one line per module). */
export const FEATURE_MODULES: Type[] = [PaywayConfigModule];
