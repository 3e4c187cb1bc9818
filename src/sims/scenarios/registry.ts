import { customScenario } from './custom';
import type { Scenario, ScenarioConfig } from './scenario';
import { SCENARIO_IDS, ScenarioConfigError } from './scenario';
import { storytellerScenario } from './storyteller';
import { studentScenario } from './student';
import { talkScenario } from './talk';
import { teacherScenario } from './teacher';

// The scenario picker's entries, in display order.
export { SCENARIO_IDS };

/** Recreates a scenario from its stored config; throws ScenarioConfigError for an unusable one. */
export function createScenario(config: ScenarioConfig): Scenario {
  switch (config.id) {
    case 'student':
      return studentScenario(config);
    case 'teacher':
      return teacherScenario(config);
    case 'storyteller':
      return storytellerScenario(config);
    case 'custom':
      return customScenario(config);
    case 'talk':
      return talkScenario();
    default:
      throw new ScenarioConfigError(`Unknown scenario "${(config as { id?: unknown }).id}"; choose one of ${SCENARIO_IDS.join(', ')}.`);
  }
}
