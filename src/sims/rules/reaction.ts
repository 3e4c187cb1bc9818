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
  /\b(?:(?:make|rewrite|rephrase|reword|shorten|simplify|expand) (?:it|that|this|them)|use (?:simpler|plainer|fewer|less|more|shorter|normal|plain)|remove (?:the|all|that|those)|get rid of|without (?:the|any)|(?:more|less) (?:casual|formal|natural|detailed|concise|simple|plain|polite|friendly|human|encouraging|specific|scary|funny|sad|mean|long|short|happy|exciting|gentle|calm|cheerful|serious|silly))\b/i;
/**
 * A correction worded as what the answer should have been or what it missed ("It should be about
 * my cat Biscuit, not a boy.", "I wanted a cat", "you forgot the ball"). Each form names the
 * answer (it, this, the story) or the person's earlier wish, so a new question ("What should I
 * name my cat?") does not count.
 */
const CORRECTION = new RegExp(
  [
    // "it should be", "the cat should be called", "this is supposed to be", "it shouldn't have"
    String.raw`\b(?:it|this|that|they|he|she|you|the (?:\w+ )?\w+) (?:should(?:n'?t| not)?|must(?:n'?t| not)?|needs? to|has to|have to|(?:is|was|are|were) supposed to|ought to) (?:be|have|say|use|mention|include|end|start|sound|call|go)\b`,
    // "could it be about a cat?", "can the story be shorter?"
    String.raw`\b(?:can|could|would|will) (?:it|this|that|the (?:\w+ )?\w+) be (?:about|a|an|more|less|shorter|longer|simpler)\b`,
    // what the person asked for before
    String.raw`\bi (?:meant|wanted|asked for|asked you|said|told you|was asking for)\b`,
    // what the answer missed
    String.raw`\b(?:forgot|forgotten|left out|missed out)\b|\b(?:is|are) missing\b|\bmissing from\b`,
    // "a cat, not a boy", "a cat rather than a boy"
    String.raw`,\s*not (?:a|an|the|about|so|that|this|my)\b|\brather than\b`,
    // "put my cat in the story", "add Biscuit to it"
    String.raw`\b(?:put|add|include|bring)\b[^.?!]{0,40}?\b(?:in|into|to) (?:it|this|that|there|the story|the answer)\b`,
    // "her name is Biscuit", "call him Max"
    String.raw`\b(?:his|her|its|their) name (?:is|should be|was)\b|\b(?:call|name) (?:it|him|her|them)\b`,
    // "that's not right", "it isn't what I asked"
    String.raw`\b(?:that|this|it)(?:'s| is)? not (?:right|correct|it|what|true|quite)\b|\b(?:that|this|it) (?:isn'?t|wasn'?t) (?:right|correct|it|what)\b`,
    // "write it about my cat", "tell it again with a cat"
    String.raw`\b(?:write|tell|say|do) (?:it|this|that|the story|the answer) (?:again|about|with|without|as|but|like|differently)\b`,
  ].join('|'),
  'i',
);
const PROGRESS =
  /\b(?:thanks|thank you|perfect|great|love it|looks good|awesome|exactly|nice|good job|well done|that works|it works|ok(?:ay)?|got it|sounds good|makes sense|next one|next problem)\b/i;
/** What an environment writes when a call fails. */
const TOOL_ERROR = /\b(?:error|exception|traceback|failed|failure|invalid|not found|denied|timed? ?out)\b/i;

export function classifyReaction(reply: string): Reaction {
  if (DONE_MARKER.test(reply)) return 'progress';
  if (REDO.test(reply) || CHANGE.test(reply) || CORRECTION.test(reply)) return 'redo';
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
