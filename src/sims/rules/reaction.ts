/**
 * What a user's reply says about the answer before it, read from the words alone: the same cues a
 * judge model would look for (the paper: moving on or thanking is progress; asking to redo,
 * correcting or rephrasing is a failure; anything else is ambiguous).
 */
export type Reaction = 'progress' | 'redo' | 'unclear';

/** The scenarios' end markers (HOMEWORK_DONE, GRADING_DONE, STORY_DONE, a custom TASK_DONE). */
const DONE_MARKER = /\b[A-Z][A-Z0-9]*_DONE\b/;
const REDO =
  /\b(?:re-?write|re-?do|try again|fix|change|new one|another one|new story|instead|wrong|incorrect|mistake|not what i|don'?t (?:use|do|write|put|add|want)|do not|stop|shorter|too (?:long|short|much))\b|^\s*no\b/i;
const PROGRESS =
  /\b(?:thanks|thank you|perfect|great|love it|looks good|awesome|exactly|nice|good job|well done|that works|it works)\b/i;

export function classifyReaction(reply: string): Reaction {
  if (DONE_MARKER.test(reply)) return 'progress';
  if (REDO.test(reply)) return 'redo';
  if (PROGRESS.test(reply)) return 'progress';
  return 'unclear';
}
