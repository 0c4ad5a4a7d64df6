"""Reinforcement learning in the manner of "Reinforcement Learning (DQN) Tutorial" and the REINFORCE
example, written for PyTorch, on a tiny corridor written here instead of gym: a ReplayMemory of
namedtuple Transitions, epsilon-greedy policy_net(state).max(1).indices.view(1, 1), a batch built with
torch.cat and a non-final mask (torch.tensor(tuple(map(...)), dtype=torch.bool)), .gather(1, action_batch),
target_net(...).max(1).values under torch.no_grad(), nn.SmoothL1Loss, AdamW with amsgrad,
torch.nn.utils.clip_grad_value_, target_net.load_state_dict(policy_net.state_dict()) and the soft update
over state_dict() items; then REINFORCE: torch.distributions.Categorical(probs) with .sample() and
.log_prob(), discounted returns normalised with (r - r.mean()) / (r.std() + eps), and
torch.cat(policy_loss).sum().

The libraries draw different random numbers, so the exploration coin flips come from Python's `random`
(seeded), the replay batches are the latest transitions, and the REINFORCE episode replays fixed actions
(their log-probabilities are what the loss needs); a sample is printed only by its type and range.
"""
import math
import random
from collections import deque, namedtuple
from itertools import count

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

random.seed(0)
torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Corridor:
    """Positions 0..5; action 1 steps right, 0 steps left; reaching 5 pays 1 and ends the episode."""

    n_observations, n_actions = 6, 2

    def reset(self):
        self.pos = 1
        return self.observe()

    def observe(self):
        return [1.0 if i == self.pos else 0.0 for i in range(6)]

    def step(self, action):
        self.pos = max(0, self.pos + (1 if action == 1 else -1))
        terminated = self.pos == 5
        return self.observe(), (1.0 if terminated else -0.1), terminated


env = Corridor()
Transition = namedtuple('Transition', ('state', 'action', 'next_state', 'reward'))


class ReplayMemory(object):

    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        """Save a transition"""
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return list(self.memory)[-batch_size:]

    def __len__(self):
        return len(self.memory)


class DQN(nn.Module):

    def __init__(self, n_observations, n_actions):
        super(DQN, self).__init__()
        self.layer1 = nn.Linear(n_observations, 16)
        self.layer2 = nn.Linear(16, 16)
        self.layer3 = nn.Linear(16, n_actions)

    def forward(self, x):
        x = F.relu(self.layer1(x))
        x = F.relu(self.layer2(x))
        return self.layer3(x)


def fixed_(module, scale):
    with torch.no_grad():
        for k, p in enumerate(module.parameters()):
            p.copy_(scale * torch.cos(torch.arange(p.numel()) * 0.61 + k).reshape(p.shape))


BATCH_SIZE = 8
GAMMA = 0.9
EPS_START = 0.9
EPS_END = 0.05
EPS_DECAY = 20
TAU = 0.005
LR = 1e-3

policy_net = DQN(env.n_observations, env.n_actions).to(device)
fixed_(policy_net, 0.4)
target_net = DQN(env.n_observations, env.n_actions).to(device)
target_net.load_state_dict(policy_net.state_dict())

optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
memory = ReplayMemory(100)
steps_done = 0


def select_action(state):
    global steps_done
    sample = random.random()
    eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * steps_done / EPS_DECAY)
    steps_done += 1
    if sample > eps_threshold:
        with torch.no_grad():
            return policy_net(state).max(1).indices.view(1, 1)
    else:
        return torch.tensor([[random.randrange(env.n_actions)]], device=device, dtype=torch.long)


def optimize_model():
    if len(memory) < BATCH_SIZE:
        return None
    transitions = memory.sample(BATCH_SIZE)
    batch = Transition(*zip(*transitions))

    non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)),
                                  device=device, dtype=torch.bool)
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)

    state_action_values = policy_net(state_batch).gather(1, action_batch)

    next_state_values = torch.zeros(BATCH_SIZE, device=device)
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected_state_action_values = (next_state_values * GAMMA) + reward_batch

    criterion = nn.SmoothL1Loss()
    loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))

    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()
    return loss.item()


num_episodes = 4
episode_durations = []
for i_episode in range(num_episodes):
    state = env.reset()
    state = torch.tensor(state, dtype=torch.float32, device=device).unsqueeze(0)
    for t in count():
        action = select_action(state)
        observation, reward, terminated = env.step(action.item())
        reward = torch.tensor([reward], device=device)
        done = terminated or t == 11

        if terminated:
            next_state = None
        else:
            next_state = torch.tensor(observation, dtype=torch.float32, device=device).unsqueeze(0)

        memory.push(state, action, next_state, reward)
        state = next_state
        loss = optimize_model()

        # Soft update of the target network's weights
        # θ′ ← τ θ + (1 −τ )θ′
        target_net_state_dict = target_net.state_dict()
        policy_net_state_dict = policy_net.state_dict()
        for key in policy_net_state_dict:
            target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[key] * (1 - TAU)
        target_net.load_state_dict(target_net_state_dict)

        if done:
            episode_durations.append(t + 1)
            break
    print(i_episode, t + 1, None if loss is None else round(loss, 6))

durations_t = torch.tensor(episode_durations, dtype=torch.float)
print(durations_t, durations_t.mean())
q = policy_net(torch.eye(6))
print(q.max(1))
print(target_net.layer3.bias)


# REINFORCE
class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(6, 16)
        self.affine2 = nn.Linear(16, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
fixed_(policy, 0.5)
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = torch.finfo(torch.float32).eps
gamma = 0.95


def select_action(state, replay_action):
    state = torch.tensor(state, dtype=torch.float32).unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    assert action.dtype == torch.int64 and 0 <= action.item() < 2
    action = torch.tensor([replay_action])  # the fixed episode's action instead of the drawn one
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R = 0
    policy_loss = []
    returns = deque()
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.appendleft(R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss


for i_episode, actions in enumerate([[1, 0, 1, 1, 1, 1], [1, 1, 1, 1], [0, 1, 1, 1, 1, 1]]):
    state, ep_reward = env.reset(), 0
    for a in actions:
        action = select_action(state, a)
        state, reward, done = env.step(action)
        policy.rewards.append(reward)
        ep_reward += reward
        if done:
            break
    print(i_episode, round(ep_reward, 4), finish_episode())

probs = policy(torch.eye(6))
m = Categorical(probs)
print(probs[:, 1], m.entropy(), m.log_prob(torch.ones(6, dtype=torch.long)))
