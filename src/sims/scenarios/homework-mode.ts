import { HOMEWORK_MODES as MODES, ScenarioConfigError, type HomeworkMode } from './scenario';

/** The homework mode of a student or teacher config; absent is 'chat'. */
export function homeworkMode(mode: unknown): HomeworkMode {
  if (mode === undefined) return 'chat';
  if (!MODES.includes(mode as HomeworkMode)) {
    throw new ScenarioConfigError(
      `homework "${String(mode)}" is not one of ${MODES.join(', ')}: "chat" puts the problem in the messages, "workspace" in a file.`,
    );
  }
  return mode as HomeworkMode;
}
