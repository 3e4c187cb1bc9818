/**
 * What a user's reply says about the answer before it, read from the words alone, with the
 * reference judge's class boundaries: moving on, accepting or thanking is progress; asking to
 * redo, correcting, rephrasing or asking for a change (however it is worded) is a correction;
 * anything else, an unrelated new question included, is ambiguous.
 */
export type Reaction = 'progress' | 'redo' | 'unclear';

/** The scenarios' end markers (HOMEWORK_DONE, GRADING_DONE, STORY_DONE, a custom TASK_DONE). */
const DONE_MARKER = /\b[A-Z][A-Z0-9]*_DONE\b/;
const REDO =
  /\b(?:re-?write|re-?do|try again|fix|change|new one|another one|new story|instead|wrong|incorrect|mistake|not what i|don'?t (?:use|do|write|put|add|want)|do not|stop|shorter|too (?:long|short|much))\b|^\s*no\b/i;
/**
 * A change request worded as a new instruction ("make it more casual", "use simpler words"):
 * the reference's judge counts it as negative feedback, not as a neutral new request. Only
 * wordings that point back at the answer count, so that a new task ("write me a poem") does not.
 */
const CHANGE =
  /\b(?:(?:make|rewrite|rephrase|reword|shorten|simplify|expand) (?:it|that|this|them)|use (?:simpler|plainer|fewer|less|more|shorter|normal|plain)|remove (?:the|all|that|those)|get rid of|without (?:the|any)|(?:more|less) (?:casual|formal|natural|detailed|concise|simple|plain|polite|friendly|human|encouraging|specific))\b/i;
const PROGRESS =
  /\b(?:thanks|thank you|perfect|great|love it|looks good|awesome|exactly|nice|good job|well done|that works|it works|ok(?:ay)?|got it|sounds good|makes sense|next one|next problem)\b/i;
/** What an environment writes when a call fails. */
const TOOL_ERROR = /\b(?:error|exception|traceback|failed|failure|invalid|not found|denied|timed? ?out)\b/i;

export function classifyReaction(reply: string): Reaction {
  if (DONE_MARKER.test(reply)) return 'progress';
  if (REDO.test(reply) || CHANGE.test(reply)) return 'redo';
  if (PROGRESS.test(reply)) return 'progress';
  return 'unclear';
}

/** A line an environment starts when a call fails ("Error: ...", "Traceback (most recent call last):"). */
const ERROR_LINE = /^\s*(?:error|exception|traceback|fatal)\b/im;

/**
 * A tool or environment result as the next state: it exists because the action called the tool,
 * so a result without an error is progress and an error is a failure of the action. An
 * environment reports a failure on its first line, or on a line of its own; words deeper in the
 * result are what the tool returned (a file the policy read may well say "error").
 */
export function classifyToolResult(result: string): Reaction {
  const firstLine = result.trimStart().split('\n', 1)[0];
  return TOOL_ERROR.test(firstLine) || ERROR_LINE.test(result) ? 'redo' : 'progress';
}
