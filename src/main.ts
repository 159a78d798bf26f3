import 'reflect-metadata';
import { runService } from './service';

void runService();
