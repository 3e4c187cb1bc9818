// The plan is shared with `nextstate serve --resume`, so it lives in the runtime layer.
export { loopResume, nextSessionIndex, resumePlan, type ResumePlan } from '../../runtime/resume-plan';
