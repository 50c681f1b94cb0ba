#define K {{k}}
