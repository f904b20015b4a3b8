package mcp

// Request methods (spec 2025-11-25 and 2026-07-28: the method of each
// request type in the schema).
const (
	MethodInitialize = "initialize"
	MethodPing       = "ping"
	// MethodDiscover asks a 2026-07-28 server what it is (spec 2026-07-28:
	// server/discover).
	MethodDiscover = "server/discover"

	MethodToolsList              = "tools/list"
	MethodToolsCall              = "tools/call"
	MethodPromptsList            = "prompts/list"
	MethodPromptsGet             = "prompts/get"
	MethodResourcesList          = "resources/list"
	MethodResourcesTemplatesList = "resources/templates/list"
	MethodResourcesRead          = "resources/read"
	MethodResourcesSubscribe     = "resources/subscribe"
	MethodResourcesUnsubscribe   = "resources/unsubscribe"
	MethodCompletionComplete     = "completion/complete"
	MethodLoggingSetLevel        = "logging/setLevel"
	// MethodSubscriptionsListen opens a 2026-07-28 stream of change
	// notifications (spec 2026-07-28: basic/patterns/subscriptions).
	MethodSubscriptionsListen = "subscriptions/listen"

	// Server-to-client requests.
	MethodSamplingCreateMessage = "sampling/createMessage"
	MethodElicitationCreate     = "elicitation/create"
	MethodRootsList             = "roots/list"

	// Tasks (spec 2025-11-25: basic/utilities/tasks; the tasks extension
	// of 2026-07-28 adds tasks/update).
	MethodTasksGet    = "tasks/get"
	MethodTasksResult = "tasks/result"
	MethodTasksList   = "tasks/list"
	MethodTasksCancel = "tasks/cancel"
	MethodTasksUpdate = "tasks/update"

	// The Skills extension (io.modelcontextprotocol/skills, "Listing
	// Skills", "Getting a Skill", "Reading Directories"): it defines no
	// notification of its own.
	MethodSkillsList             = "skills/list"
	MethodSkillsGet              = "skills/get"
	MethodResourcesDirectoryRead = "resources/directory/read"
)

// Notification methods.
const (
	NotificationInitialized = "notifications/initialized"
	NotificationCancelled   = "notifications/cancelled"
	NotificationProgress    = "notifications/progress"
	NotificationMessage     = "notifications/message"

	NotificationToolsListChanged     = "notifications/tools/list_changed"
	NotificationPromptsListChanged   = "notifications/prompts/list_changed"
	NotificationResourcesListChanged = "notifications/resources/list_changed"
	NotificationResourcesUpdated     = "notifications/resources/updated"
	NotificationRootsListChanged     = "notifications/roots/list_changed"
	NotificationTasksStatus          = "notifications/tasks/status"
	// NotificationSubscriptionsAcknowledged opens a subscriptions/listen
	// stream (spec 2026-07-28: basic/patterns/subscriptions).
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
)

// StaleLists maps each server notification that a list changed to the
// list methods whose results it makes stale (spec 2025-11-25: server/tools,
// server/prompts and server/resources, "List Changed Notification"). A
// server sends them on its own time: a session refetches those lists, and
// a trace's verification compares them per session rather than beside
// whichever request happened to be pending.
var StaleLists = map[string][]string{
	NotificationToolsListChanged:     {MethodToolsList},
	NotificationPromptsListChanged:   {MethodPromptsList},
	NotificationResourcesListChanged: {MethodResourcesList, MethodResourcesTemplatesList},
}
