/** The help panels' subjects. A plain module, so that .ts files can name the type too. */
export type HowTopic = 'setup' | 'charts' | 'feed' | 'tokens' | 'before-after' | 'talk' | 'shuffled-control';
