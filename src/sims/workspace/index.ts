export {
  MemoryWorkspace,
  memoryWorkspaces,
  checkWorkspacePath,
  checkFileSize,
  checkFileCount,
  WorkspacePathError,
  WorkspaceFullError,
  WORKSPACE_LIMITS,
  type Workspace,
  type WorkspaceFactory,
} from './workspace';
export { WORKSPACE_TOOLS, READ_TOOL_NAME, WRITE_TOOL_NAME, APPEND_TOOL_NAME, runWorkspaceCall, type WorkspaceChange, type WorkspaceCallResult } from './tools';
export { homeworkPath, homeworkFileText, prepareHomework, WORKSPACE_SYSTEM_PROMPT } from './homework';
