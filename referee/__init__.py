"""The Pyramid Arena referee: the only authority in a match between untrusted bots."""

from pyramid_sdk import transport

transport.configure()  # before any referee module loads gRPC, which reads its settings once
