import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { StateGauges } from '../metrics/state-gauges';
import { HealthController } from './health.controller';

@Module({ imports: [TerminusModule], controllers: [HealthController], providers: [StateGauges] })
export class HealthModule {}
