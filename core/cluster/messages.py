"""What the cluster's code says, as marked templates: filled in English where it is said (the cluster check's
thread, the runner, the CLI), and read back into the page's language where a page shows it
(core.language.i18n.again)."""

from core.language.i18n import N_

FORMS = N_("auto, HOST:PORT (a node's Ray address, port 6379 by default) or ray://HOST:PORT (Ray Client, 10001)")
BAD_ADDRESS = N_("{env} (or --ray) must be {forms}, not {text}.")
UNKNOWN_HOST = N_("The Ray cluster's host {host} ({env}) is not known here.")
NOTHING_LISTENS = N_(
    "Nothing listens at {host}:{port} ({env}): is the Ray cluster started (ray start --head) and is that its port?"
)
NO_ANSWER = N_("The Ray cluster at {host}:{port} ({env}) did not answer within {seconds} s ({why}).")
OPEN_WARNING = N_(
    "Warning: the Ray cluster in use accepts work without a token ({env}=1): anyone on its network can run code "
    "there. `{safe}` starts one with token authentication."
)
TOKEN_REFUSED = N_(
    "The Ray cluster at {address} refused this machine's token: copy the cluster's ~/.ray/auth_token here (or set "
    "RAY_AUTH_TOKEN) and RAY_AUTH_MODE=token."
)
VERSIONS = N_("The Ray cluster at {address} runs other versions than this machine ({here}): they must match ({first}).")
NO_CONNECTION = N_("Could not connect to the Ray cluster at {address} ({error}).")
NONE_NAMED = N_("No Ray cluster is named: set {env} (or --ray) to {forms}.")
OTHER_CLUSTER = N_("This process is connected to the Ray cluster at {connected}, not {address}.")
SLOW_CONNECT = N_("The Ray cluster at {address} did not finish connecting within {seconds} s.")
NO_TOKEN_HERE = N_(
    "The Ray cluster at {address} has token authentication and this machine has no token for it: set "
    "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN to the token `{safe}` printed on the GPU box (or copy its "
    "~/.ray/auth_token here)."
)
WRONG_TOKEN = N_(
    "The Ray cluster at {address} has token authentication and it refused this machine's token: set "
    "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN to the token `{safe}` printed on the GPU box (or copy its "
    "~/.ray/auth_token here)."
)
OPEN_CLUSTER = N_(
    "The Ray cluster at {address} accepts work without a token: anyone who can reach its ports can run code there. "
    "Start it with `{safe}` on the GPU box (token authentication), or use it anyway with {flag} ({env}=1)."
)
NOT_A_NODE = N_("device names the Ray node {name}, which is not an alive node of the cluster (nodes: {choices}).")
NODE_SLOW = N_("Node {node} did not list its devices within {seconds} s.")
NODE_FAILED = N_("Node {node} could not list its devices ({first}).")
ASKING_AT = N_("Asking the Ray cluster at {address} for its nodes…")
ASKING = N_("Asking the Ray cluster for its nodes…")
FOUND = N_("Ray cluster at {address}: {count} node(s).")
ONLY_HERE = N_("{problem} Only this machine's devices are offered.")

ALL = (
    FORMS,
    BAD_ADDRESS,
    UNKNOWN_HOST,
    NOTHING_LISTENS,
    NO_ANSWER,
    OPEN_WARNING,
    TOKEN_REFUSED,
    VERSIONS,
    NO_CONNECTION,
    NONE_NAMED,
    OTHER_CLUSTER,
    SLOW_CONNECT,
    NO_TOKEN_HERE,
    WRONG_TOKEN,
    OPEN_CLUSTER,
    NOT_A_NODE,
    NODE_SLOW,
    NODE_FAILED,
    ASKING_AT,
    ASKING,
    FOUND,
    ONLY_HERE,
)
