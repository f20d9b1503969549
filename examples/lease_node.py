#!/usr/bin/env python3
"""A tiny lease node for the harness's lease workload, in plain Python.

Not PaxosLease: node n0 alone decides every request and the other nodes
forward to it. That is safe under partitions (a request that cannot reach
n0 times out, which the checker counts as unknown, never as a grant) but
not available while n0 is cut off, and unsafe if n0 restarts (it forgets
its leases). It shows what a node must answer; replace decide() with your
own protocol.

Run it: bin/maelstrom test -w lease --bin examples/lease_node.py ...
"""
import json
import sys
import time

node_id = None
next_msg_id = 0
leases = {}  # chunk -> [server, token, expiry in time.monotonic() seconds]
last_token = 0
forwarded = {}  # msg_id of a fwd to n0 -> (client, the client's msg_id)


def send(dest, body):
    global next_msg_id
    body["msg_id"] = next_msg_id
    next_msg_id += 1
    print(json.dumps({"src": node_id, "dest": dest, "body": body}), flush=True)


def decide(req):
    """n0's answer to a client request (a reply body without in_reply_to)."""
    global last_token
    kind, chunk, now = req["type"], req.get("chunk_handle"), time.monotonic()
    cur = leases.get(chunk)
    live = cur is not None and cur[2] > now
    if kind in ("lease_grant", "lease_renew"):
        server, ms = req["server"], req.get("lease_ms", 60000)
        if live and cur[0] != server:
            if kind == "lease_renew":
                return {"type": "error", "code": 22, "text": f"{chunk} is held by {cur[0]}"}
            return {"type": "lease_grant_ok", "chunk_handle": chunk, "primary": cur[0],
                    "expires_in_ms": int((cur[2] - now) * 1000), "token": cur[1]}
        last_token += 1  # fencing token: larger for every grant and renew
        # The client counts ms from its invoke, before now: it believes less.
        leases[chunk] = [server, last_token, max(now + ms / 1000, cur[2] if live else 0)]
        if kind == "lease_grant":
            return {"type": "lease_grant_ok", "chunk_handle": chunk, "primary": server,
                    "expires_in_ms": ms, "token": last_token}
        return {"type": "lease_renew_ok", "new_expires_in_ms": ms, "token": last_token}
    if kind == "lease_check":
        if cur is None:
            return {"type": "lease_check_ok", "primary": None, "remaining_ms": 0, "expired": True}
        remaining = int((cur[2] - now) * 1000) if live else 0
        return {"type": "lease_check_ok", "primary": cur[0], "remaining_ms": remaining,
                "expired": not live}
    if kind == "lease_release":
        # Only the holder's latest token ends the lease: a late release
        # carrying an older token must not end a newer lease.
        if live and cur[0] == req["server"] and cur[1] == req.get("token"):
            cur[2] = now
        return {"type": "lease_release_ok", "chunk_handle": chunk}
    return {"type": "error", "code": 10, "text": f"unsupported message type {kind}"}


for line in sys.stdin:
    msg = json.loads(line)
    src, body = msg["src"], msg["body"]
    if body["type"] == "init":
        node_id = body["node_id"]
        send(src, {"type": "init_ok", "in_reply_to": body["msg_id"]})
    elif body["type"] == "fwd":  # at n0: a request another node forwarded
        send(src, {"type": "fwd_ok", "in_reply_to": body["msg_id"], "reply": decide(body["req"])})
    elif body["type"] == "fwd_ok":  # n0's answer: relay it to the client
        client, client_msg_id = forwarded.pop(body["in_reply_to"])
        send(client, dict(body["reply"], in_reply_to=client_msg_id))
    elif node_id == "n0":
        send(src, dict(decide(body), in_reply_to=body["msg_id"]))
    else:
        forwarded[next_msg_id] = (src, body["msg_id"])
        send("n0", {"type": "fwd", "req": body})
