/** The bounds a preset is checked against, apart so that every module a preset names can read them. */
/** The most votes a preset may ask of one judge per turn (binaryVotes, hintVotes). */
export const MAX_VOTES = 64;
/** The largest top-k set a preset may ask for (hintSelection.k): the sets are read back per token. */
export const MAX_TOP_K = 64;
/** The most tokens a config may ask one generation for: past every model's context window. */
export const MAX_NEW_TOKENS = 1_000_000;
