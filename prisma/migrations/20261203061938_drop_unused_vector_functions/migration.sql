DROP FUNCTION mnemo_message_vectors_mark(p_user text, p_model text);

DROP FUNCTION mnemo_message_vectors_since(p_user text, p_model text, p_since text, p_dims integer);
