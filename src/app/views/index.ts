export { default as MetricsCharts } from './MetricsCharts.svelte';
export { default as ConversationFeed } from './ConversationFeed.svelte';
export { default as TokenView } from './TokenView.svelte';
export { default as BeforeAfter } from './BeforeAfter.svelte';
export { default as HowItWorks } from './HowItWorks.svelte';
export * from './derive';
export { default as TrajectoryView } from './TrajectoryView.svelte';
export { default as AccuracyChart } from './AccuracyChart.svelte';
export * from './derive-toolcall';
