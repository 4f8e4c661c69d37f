#pragma once
// SIGINT/SIGTERM during training: the handler only sets a flag; the trainer finishes the step
// it is in, saves a checkpoint and exits cleanly. A second signal exits at once.
namespace attn::train {

void install_stop_handlers();
bool stop_requested();
void clear_stop_request();  // tests

}  // namespace attn::train
