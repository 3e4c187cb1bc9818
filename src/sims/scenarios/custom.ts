import { ScenarioConfigError, type CustomScenarioConfig, type Scenario } from './scenario';

const LIMITS = { personaChars: 8_000, preferenceChars: 4_000, maxTurns: 50 };

/**
 * A simulated user the person describes. Their persona becomes the simulator's system prompt, with
 * the one instruction the run loop depends on (how to say "done") added at the end.
 */
export function customScenario(input: CustomScenarioConfig): Scenario {
  const config = normalise(input);
  const template = config.firstMessageTemplate!;
  return {
    config,
    id: 'custom',
    title: 'Custom persona',
    summary: 'A simulated user you describe, with your own preference for the evaluator.',
    persona:
      `${config.persona.trim()}\n\nYou are talking with an AI assistant; you play the user described above and ` +
      'never do the task yourself. If the answer is not what you want, say what is wrong and ask for a new one. ' +
      `When you are satisfied, say so and end that message with exactly ${config.doneMarker}. ` +
      'Reply with your next message to the AI only.',
    firstMessage: (problem) => template.replaceAll('{question}', problem.question),
    doneMarker: config.doneMarker!,
    maxTurns: config.maxTurns!,
    baseModelReplies: 'latest',
    preference: config.preference.trim(),
    problemSource: config.problemSource!,
    workspace: null,
  };
}

function normalise(input: CustomScenarioConfig): CustomScenarioConfig {
  const config: CustomScenarioConfig = {
    id: 'custom',
    persona: input.persona,
    preference: input.preference,
    doneMarker: input.doneMarker?.trim() || 'TASK_DONE',
    maxTurns: input.maxTurns ?? 8,
    problemSource: input.problemSource ?? 'gsm8k',
    firstMessageTemplate: input.firstMessageTemplate ?? '{question}',
  };
  if (!config.persona.trim() || config.persona.length > LIMITS.personaChars) {
    throw new ScenarioConfigError(`Describe the persona in 1 to ${LIMITS.personaChars} characters.`);
  }
  if (!config.preference.trim() || config.preference.length > LIMITS.preferenceChars) {
    throw new ScenarioConfigError(`Describe the preference in 1 to ${LIMITS.preferenceChars} characters: it is what the evaluator scores.`);
  }
  if (!/^[A-Z][A-Z0-9_]{2,39}$/.test(config.doneMarker!)) {
    throw new ScenarioConfigError(`The done marker "${config.doneMarker}" must be 3 to 40 capital letters, digits or underscores, like TASK_DONE.`);
  }
  if (!Number.isInteger(config.maxTurns) || config.maxTurns! < 1 || config.maxTurns! > LIMITS.maxTurns) {
    throw new ScenarioConfigError(`Max turns must be a whole number from 1 to ${LIMITS.maxTurns}.`);
  }
  if (config.problemSource === 'gsm8k' && !config.firstMessageTemplate!.includes('{question}')) {
    throw new ScenarioConfigError('The first message template must contain {question} where the problem goes.');
  }
  return config;
}
