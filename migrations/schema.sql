--
-- PostgreSQL database dump
--




--
-- Name: vector; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public;


--
-- Name: EXTENSION vector; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION vector IS 'vector data type and ivfflat and hnsw access methods';


--
-- Name: memoria_count_terms_of_inserted(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memoria_count_terms_of_inserted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
        BEGIN
            INSERT INTO jobs (kind, memory_id)
            SELECT 'recall.term_counts', added.id FROM added WHERE added.deleted_at IS NULL AND NOT added.is_sensitive;
            RETURN NULL;
        END $$;


--
-- Name: memoria_count_terms_of_updated(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memoria_count_terms_of_updated() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
        BEGIN
            INSERT INTO jobs (kind, memory_id) VALUES ('recall.term_counts', NEW.id);
            RETURN NULL;
        END $$;


--
-- Name: memoria_public_id(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memoria_public_id() RETURNS bigint
    LANGUAGE sql PARALLEL SAFE
    RETURN GREATEST((1)::bigint, (((('x'::text || "right"(replace((gen_random_uuid())::text, '-'::text, ''::text), 14)))::bit(56))::bigint >> 3));


--
-- Name: FUNCTION memoria_public_id(); Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON FUNCTION public.memoria_public_id() IS 'A random id in [1, 9007199254740991] from the strong random source behind gen_random_uuid()';


--
-- Name: memoria_scope_lexeme(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memoria_scope_lexeme(namespace_id bigint) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ('namespace '::text || namespace_id);


--
-- Name: memoria_scope_query(bigint, tsquery); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memoria_scope_query(namespace_id bigint, query tsquery) RETURNS tsquery
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (query && (quote_literal(public.memoria_scope_lexeme(namespace_id)))::tsquery);


--
-- Name: memoria_scope_search(bigint, tsvector); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memoria_scope_search(namespace_id bigint, search_vector tsvector) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (search_vector || array_to_tsvector(ARRAY[public.memoria_scope_lexeme(namespace_id)]));


--
-- Name: memoria_tags_text(text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memoria_tags_text(tags text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN COALESCE(array_to_string(tags, ' '::text), ''::text);


--
-- Name: memoria_uncount_terms_of_deleted(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memoria_uncount_terms_of_deleted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
        DECLARE
            emptied text[];
            emptied_namespaces bigint[];
        BEGIN
            PERFORM pg_advisory_xact_lock(7886928847432581120::bigint + s.namespace_id)
            FROM (
                SELECT r.namespace_id FROM removed r
                UNION
                SELECT t.namespace_id FROM memory_terms t JOIN removed r ON r.id = t.memory_id
                ORDER BY 1
            ) s;
            WITH gone AS (
                DELETE FROM memory_terms t USING removed r WHERE t.memory_id = r.id
                RETURNING t.namespace_id, t.lexemes
            ),
            documents AS (
                UPDATE namespace_terms n SET memories = n.memories - d.memories
                FROM (SELECT namespace_id, count(*) AS memories FROM gone GROUP BY 1) d
                WHERE n.namespace_id = d.namespace_id
            ),
            terms AS (
                UPDATE term_counts c SET memories = c.memories - d.memories
                FROM (
                    SELECT g.namespace_id, l.lexeme, count(*) AS memories
                    FROM gone g, unnest(g.lexemes) AS l (lexeme)
                    GROUP BY 1, 2
                ) d
                WHERE c.lexeme = d.lexeme AND c.namespace_id = d.namespace_id
                RETURNING c.lexeme, c.namespace_id, c.memories
            )
            SELECT array_agg(lexeme), array_agg(namespace_id) INTO emptied, emptied_namespaces
            FROM terms WHERE memories <= 0;
            DELETE FROM term_counts c
            USING unnest(emptied, emptied_namespaces) AS e (lexeme, namespace_id)
            WHERE c.lexeme = e.lexeme AND c.namespace_id = e.namespace_id AND c.memories <= 0;
            RETURN NULL;
        END $$;




--
-- Name: alembic_version; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alembic_version (
    version_num character varying(32) NOT NULL
);


--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    id bigint NOT NULL,
    user_id bigint NOT NULL,
    prefix text NOT NULL,
    key_hash bytea NOT NULL,
    label text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    scopes text[] DEFAULT '{read,write}'::text[] NOT NULL,
    expires_at timestamp with time zone,
    last_used_at timestamp with time zone,
    CONSTRAINT api_keys_scopes_check CHECK (((cardinality(scopes) >= 1) AND (scopes <@ '{read,write,admin,secrets:read}'::text[])))
);


--
-- Name: api_keys_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.api_keys ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.api_keys_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: concept_edges; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.concept_edges (
    id bigint NOT NULL,
    namespace_id bigint NOT NULL,
    source_id bigint NOT NULL,
    target_id bigint NOT NULL,
    relation text DEFAULT 'co_occurs'::text NOT NULL,
    weight real DEFAULT 1 NOT NULL,
    evidence_memory_ids bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    valid_from timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT concept_edges_check CHECK ((source_id <> target_id))
);


--
-- Name: concept_edges_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.concept_edges ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.concept_edges_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: concepts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.concepts (
    id bigint NOT NULL,
    namespace_id bigint NOT NULL,
    name text NOT NULL,
    display_name text NOT NULL,
    aliases text[] DEFAULT '{}'::text[] NOT NULL,
    kind text,
    embedding public.halfvec(384),
    doc_freq integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    public_id bigint DEFAULT public.memoria_public_id() NOT NULL,
    CONSTRAINT concepts_public_id_range CHECK (((public_id >= 1) AND (public_id <= '9007199254740991'::bigint)))
);


--
-- Name: concepts_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.concepts ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.concepts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.jobs (
    id bigint NOT NULL,
    kind text NOT NULL,
    memory_id bigint,
    state text DEFAULT 'queued'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    run_after timestamp with time zone DEFAULT now() NOT NULL,
    leased_until timestamp with time zone,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT jobs_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT jobs_kind_check CHECK (((char_length(kind) >= 1) AND (char_length(kind) <= 64))),
    CONSTRAINT jobs_leased_while_running CHECK (((state = 'running'::text) = (leased_until IS NOT NULL))),
    CONSTRAINT jobs_state_check CHECK ((state = ANY (ARRAY['queued'::text, 'running'::text, 'failed'::text])))
);


--
-- Name: jobs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.jobs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: memoria_meta; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memoria_meta (
    key text NOT NULL,
    value text NOT NULL
);


--
-- Name: memories; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memories (
    id bigint NOT NULL,
    namespace_id bigint NOT NULL,
    content text NOT NULL,
    category text,
    tags text[] DEFAULT '{}'::text[] NOT NULL,
    importance real DEFAULT 0.5 NOT NULL,
    expanded_keywords text,
    is_sensitive boolean DEFAULT false NOT NULL,
    source text,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    content_hash bytea NOT NULL,
    embedding public.halfvec(384),
    embedding_model text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    search_vector tsvector GENERATED ALWAYS AS ((((setweight(to_tsvector('english'::regconfig, content), 'A'::"char") || setweight(to_tsvector('english'::regconfig, COALESCE(expanded_keywords, ''::text)), 'B'::"char")) || setweight(to_tsvector('english'::regconfig, public.memoria_tags_text(tags)), 'C'::"char")) || setweight(to_tsvector('english'::regconfig, COALESCE(category, ''::text)), 'D'::"char"))) STORED,
    has_secrets boolean DEFAULT false NOT NULL,
    public_id bigint DEFAULT public.memoria_public_id() NOT NULL,
    kind text DEFAULT 'memory'::text NOT NULL,
    pinned boolean DEFAULT false NOT NULL,
    expires_at timestamp with time zone,
    capture_key text,
    seen_count integer DEFAULT 1 NOT NULL,
    last_seen_at timestamp with time zone,
    fold_key bytea,
    valid_from timestamp with time zone,
    valid_to timestamp with time zone,
    CONSTRAINT memories_capture_key_check CHECK (((char_length(capture_key) >= 1) AND (char_length(capture_key) <= 300))),
    CONSTRAINT memories_category_check CHECK (((char_length(category) >= 1) AND (char_length(category) <= 64))),
    CONSTRAINT memories_content_check CHECK (((char_length(content) >= 1) AND (char_length(content) <= 100000))),
    CONSTRAINT memories_importance_check CHECK (((importance >= (0)::double precision) AND (importance <= (1)::double precision))),
    CONSTRAINT memories_kind_check CHECK ((kind = ANY (ARRAY['memory'::text, 'episode'::text]))),
    CONSTRAINT memories_public_id_range CHECK (((public_id >= 1) AND (public_id <= '9007199254740991'::bigint))),
    CONSTRAINT memories_seen_count_check CHECK ((seen_count >= 1)),
    CONSTRAINT memories_validity_check CHECK (((valid_to IS NULL) OR (valid_from IS NULL) OR (valid_to >= valid_from)))
);


--
-- Name: memories_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.memories ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.memories_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: memory_concepts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_concepts (
    memory_id bigint NOT NULL,
    concept_id bigint NOT NULL
);


--
-- Name: memory_links; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_links (
    id bigint NOT NULL,
    source_id bigint NOT NULL,
    target_id bigint NOT NULL,
    kind text NOT NULL,
    origin text DEFAULT 'user'::text NOT NULL,
    reason text,
    target_valid_to_before timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT memory_links_kind_check CHECK ((kind = ANY (ARRAY['supersedes'::text, 'resolved-by'::text, 'see-also'::text, 'part-of'::text]))),
    CONSTRAINT memory_links_not_self CHECK ((source_id <> target_id)),
    CONSTRAINT memory_links_origin_check CHECK ((origin = ANY (ARRAY['user'::text, 'auto'::text]))),
    CONSTRAINT memory_links_reason_check CHECK ((char_length(reason) <= 1000))
);


--
-- Name: memory_links_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.memory_links ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.memory_links_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: memory_secrets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_secrets (
    memory_id bigint NOT NULL,
    ordinal integer NOT NULL,
    kind text NOT NULL,
    key_id text NOT NULL,
    nonce bytea NOT NULL,
    ciphertext bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT memory_secrets_ciphertext_check CHECK ((octet_length(ciphertext) >= 16)),
    CONSTRAINT memory_secrets_key_id_check CHECK (((char_length(key_id) >= 1) AND (char_length(key_id) <= 64))),
    CONSTRAINT memory_secrets_kind_check CHECK (((char_length(kind) >= 1) AND (char_length(kind) <= 40))),
    CONSTRAINT memory_secrets_nonce_check CHECK ((octet_length(nonce) = 12)),
    CONSTRAINT memory_secrets_ordinal_check CHECK ((ordinal >= 1))
);


--
-- Name: memory_terms; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_terms (
    memory_id bigint NOT NULL,
    namespace_id bigint NOT NULL,
    lexemes text[] NOT NULL
);


--
-- Name: namespace_shares; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.namespace_shares (
    namespace_id bigint NOT NULL,
    grantee_id bigint NOT NULL,
    permission text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT namespace_shares_permission_check CHECK ((permission = ANY (ARRAY['read'::text, 'write'::text])))
);


--
-- Name: namespace_terms; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.namespace_terms (
    namespace_id bigint NOT NULL,
    memories integer NOT NULL
);


--
-- Name: namespaces; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.namespaces (
    id bigint NOT NULL,
    user_id bigint NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    graph_memories integer DEFAULT 0 NOT NULL,
    CONSTRAINT namespaces_name_check CHECK (((char_length(name) >= 1) AND (char_length(name) <= 200)))
);


--
-- Name: namespaces_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.namespaces ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.namespaces_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: rate_limits; Type: TABLE; Schema: public; Owner: -
--

CREATE UNLOGGED TABLE public.rate_limits (
    bucket text NOT NULL,
    tokens double precision NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT rate_limits_bucket_check CHECK (((char_length(bucket) >= 1) AND (char_length(bucket) <= 200)))
);


--
-- Name: secret_reads; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.secret_reads (
    id bigint NOT NULL,
    memory_id bigint NOT NULL,
    user_id bigint NOT NULL,
    key_id bigint,
    secrets integer NOT NULL,
    client text,
    read_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT secret_reads_client_check CHECK ((char_length(client) <= 200)),
    CONSTRAINT secret_reads_secrets_check CHECK ((secrets >= 0))
);


--
-- Name: secret_reads_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.secret_reads ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.secret_reads_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: session_ledger; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.session_ledger (
    user_id bigint NOT NULL,
    session_id text NOT NULL,
    memory_id bigint NOT NULL,
    injected_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    chars integer DEFAULT 0 NOT NULL,
    CONSTRAINT session_ledger_chars_check CHECK ((chars >= 0)),
    CONSTRAINT session_ledger_session_id_check CHECK (((char_length(session_id) >= 1) AND (char_length(session_id) <= 128)))
);


--
-- Name: term_counts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.term_counts (
    lexeme text NOT NULL,
    namespace_id bigint NOT NULL,
    memories integer NOT NULL
);


--
-- Name: ui_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ui_sessions (
    token_hash bytea NOT NULL,
    key_id bigint NOT NULL,
    csrf_token text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT ui_sessions_token_hash_check CHECK ((octet_length(token_hash) = 32))
);


--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id bigint NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT users_name_check CHECK (((char_length(name) >= 1) AND (char_length(name) <= 128)))
);


--
-- Name: users_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.users ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.users_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: alembic_version alembic_version_pkc; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alembic_version
    ADD CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num);


--
-- Name: api_keys api_keys_key_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash);


--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);


--
-- Name: concept_edges concept_edges_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.concept_edges
    ADD CONSTRAINT concept_edges_pkey PRIMARY KEY (id);


--
-- Name: concept_edges concept_edges_source_id_target_id_relation_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.concept_edges
    ADD CONSTRAINT concept_edges_source_id_target_id_relation_key UNIQUE (source_id, target_id, relation);


--
-- Name: concepts concepts_namespace_id_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.concepts
    ADD CONSTRAINT concepts_namespace_id_name_key UNIQUE (namespace_id, name);


--
-- Name: concepts concepts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.concepts
    ADD CONSTRAINT concepts_pkey PRIMARY KEY (id);


--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);


--
-- Name: memoria_meta memoria_meta_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memoria_meta
    ADD CONSTRAINT memoria_meta_pkey PRIMARY KEY (key);


--
-- Name: memories memories_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memories
    ADD CONSTRAINT memories_pkey PRIMARY KEY (id);


--
-- Name: memory_concepts memory_concepts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_concepts
    ADD CONSTRAINT memory_concepts_pkey PRIMARY KEY (memory_id, concept_id);


--
-- Name: memory_links memory_links_once; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_links
    ADD CONSTRAINT memory_links_once UNIQUE (source_id, kind, target_id);


--
-- Name: memory_links memory_links_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_links
    ADD CONSTRAINT memory_links_pkey PRIMARY KEY (id);


--
-- Name: memory_secrets memory_secrets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_secrets
    ADD CONSTRAINT memory_secrets_pkey PRIMARY KEY (memory_id, ordinal);


--
-- Name: memory_terms memory_terms_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_terms
    ADD CONSTRAINT memory_terms_pkey PRIMARY KEY (memory_id);


--
-- Name: namespace_shares namespace_shares_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.namespace_shares
    ADD CONSTRAINT namespace_shares_pkey PRIMARY KEY (namespace_id, grantee_id);


--
-- Name: namespace_terms namespace_terms_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.namespace_terms
    ADD CONSTRAINT namespace_terms_pkey PRIMARY KEY (namespace_id);


--
-- Name: namespaces namespaces_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.namespaces
    ADD CONSTRAINT namespaces_pkey PRIMARY KEY (id);


--
-- Name: namespaces namespaces_user_id_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.namespaces
    ADD CONSTRAINT namespaces_user_id_name_key UNIQUE (user_id, name);


--
-- Name: rate_limits rate_limits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_limits
    ADD CONSTRAINT rate_limits_pkey PRIMARY KEY (bucket);


--
-- Name: secret_reads secret_reads_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.secret_reads
    ADD CONSTRAINT secret_reads_pkey PRIMARY KEY (id);


--
-- Name: session_ledger session_ledger_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.session_ledger
    ADD CONSTRAINT session_ledger_pkey PRIMARY KEY (user_id, session_id, memory_id);


--
-- Name: term_counts term_counts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.term_counts
    ADD CONSTRAINT term_counts_pkey PRIMARY KEY (lexeme, namespace_id);


--
-- Name: ui_sessions ui_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ui_sessions
    ADD CONSTRAINT ui_sessions_pkey PRIMARY KEY (token_hash);


--
-- Name: users users_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_name_key UNIQUE (name);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: api_keys_user_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_user_idx ON public.api_keys USING btree (user_id);


--
-- Name: concept_edges_source_strongest_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX concept_edges_source_strongest_idx ON public.concept_edges USING btree (source_id, weight DESC);


--
-- Name: concept_edges_target_strongest_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX concept_edges_target_strongest_idx ON public.concept_edges USING btree (target_id, weight DESC);


--
-- Name: concepts_aliases_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX concepts_aliases_idx ON public.concepts USING gin (aliases);


--
-- Name: concepts_embedding_hnsw_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX concepts_embedding_hnsw_idx ON public.concepts USING hnsw (embedding public.halfvec_cosine_ops) WITH (m='16', ef_construction='64');


--
-- Name: concepts_name_namespace_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX concepts_name_namespace_idx ON public.concepts USING btree (name, namespace_id);


--
-- Name: concepts_public_id_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX concepts_public_id_key ON public.concepts USING btree (public_id);


--
-- Name: jobs_due_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_due_idx ON public.jobs USING btree (run_after, id) WHERE (state = 'queued'::text);


--
-- Name: jobs_leased_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_leased_idx ON public.jobs USING btree (leased_until) WHERE (state = 'running'::text);


--
-- Name: jobs_memory_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_memory_idx ON public.jobs USING btree (memory_id, kind);


--
-- Name: memories_capture_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX memories_capture_key_idx ON public.memories USING btree (namespace_id, capture_key) WHERE (capture_key IS NOT NULL);


--
-- Name: memories_curated_rank_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memories_curated_rank_idx ON public.memories USING btree (namespace_id, importance DESC, created_at DESC, id DESC) WHERE ((kind = 'memory'::text) AND (deleted_at IS NULL));


--
-- Name: memories_embedding_hnsw_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memories_embedding_hnsw_idx ON public.memories USING hnsw (embedding public.halfvec_cosine_ops) WITH (m='16', ef_construction='128');


--
-- Name: memories_expires_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memories_expires_at_idx ON public.memories USING btree (expires_at) WHERE (expires_at IS NOT NULL);


--
-- Name: memories_fold_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memories_fold_key_idx ON public.memories USING btree (namespace_id, fold_key) WHERE ((fold_key IS NOT NULL) AND (deleted_at IS NULL));


--
-- Name: memories_ns_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memories_ns_created_idx ON public.memories USING btree (namespace_id, created_at DESC, id DESC);


--
-- Name: memories_ns_hash_live_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX memories_ns_hash_live_idx ON public.memories USING btree (namespace_id, content_hash) WHERE (deleted_at IS NULL);


--
-- Name: memories_pinned_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memories_pinned_idx ON public.memories USING btree (namespace_id) WHERE (pinned AND (deleted_at IS NULL));


--
-- Name: memories_public_id_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX memories_public_id_key ON public.memories USING btree (public_id);


--
-- Name: memories_scope_search_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memories_scope_search_idx ON public.memories USING gin (public.memoria_scope_search(namespace_id, search_vector)) WHERE (deleted_at IS NULL);


--
-- Name: memories_scope_vectors_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memories_scope_vectors_idx ON public.memories USING btree (namespace_id) INCLUDE (id, is_sensitive, embedding_model, embedding) WHERE ((deleted_at IS NULL) AND (embedding IS NOT NULL));


--
-- Name: memories_search_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memories_search_idx ON public.memories USING gin (search_vector);


--
-- Name: memories_session_turns_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memories_session_turns_idx ON public.memories USING btree (namespace_id, ((metadata ->> 'session_id'::text)), ((metadata -> 'turn'::text)), ((metadata -> 'chunk'::text)), created_at, id) WHERE ((capture_key IS NOT NULL) AND (deleted_at IS NULL));


--
-- Name: memories_tags_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memories_tags_idx ON public.memories USING gin (tags);


--
-- Name: memories_unembedded_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memories_unembedded_idx ON public.memories USING btree (id) WHERE ((embedding IS NULL) AND (deleted_at IS NULL));


--
-- Name: memory_concepts_concept_memory_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_concepts_concept_memory_idx ON public.memory_concepts USING btree (concept_id, memory_id DESC);


--
-- Name: memory_links_superseded_once; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX memory_links_superseded_once ON public.memory_links USING btree (target_id) WHERE (kind = 'supersedes'::text);


--
-- Name: memory_links_target_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_links_target_idx ON public.memory_links USING btree (target_id, kind);


--
-- Name: memory_terms_namespace_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_terms_namespace_idx ON public.memory_terms USING btree (namespace_id);


--
-- Name: namespace_shares_grantee_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX namespace_shares_grantee_idx ON public.namespace_shares USING btree (grantee_id);


--
-- Name: rate_limits_idle_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rate_limits_idle_idx ON public.rate_limits USING btree (updated_at);


--
-- Name: secret_reads_user_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX secret_reads_user_idx ON public.secret_reads USING btree (user_id, read_at DESC);


--
-- Name: session_ledger_expires_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX session_ledger_expires_at_idx ON public.session_ledger USING btree (expires_at);


--
-- Name: session_ledger_memory_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX session_ledger_memory_idx ON public.session_ledger USING btree (memory_id);


--
-- Name: term_counts_namespace_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX term_counts_namespace_idx ON public.term_counts USING btree (namespace_id);


--
-- Name: ui_sessions_expires_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ui_sessions_expires_idx ON public.ui_sessions USING btree (expires_at);


--
-- Name: ui_sessions_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ui_sessions_key_idx ON public.ui_sessions USING btree (key_id);


--
-- Name: memories memories_count_terms_of_inserted; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER memories_count_terms_of_inserted AFTER INSERT ON public.memories REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION public.memoria_count_terms_of_inserted();


--
-- Name: memories memories_count_terms_of_updated; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER memories_count_terms_of_updated AFTER UPDATE OF search_vector, namespace_id, deleted_at, is_sensitive ON public.memories FOR EACH ROW WHEN (((old.search_vector IS DISTINCT FROM new.search_vector) OR (old.namespace_id <> new.namespace_id) OR ((old.deleted_at IS NULL) <> (new.deleted_at IS NULL)) OR (old.is_sensitive <> new.is_sensitive))) EXECUTE FUNCTION public.memoria_count_terms_of_updated();


--
-- Name: memories memories_uncount_terms_of_deleted; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER memories_uncount_terms_of_deleted AFTER DELETE ON public.memories REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION public.memoria_uncount_terms_of_deleted();


--
-- Name: api_keys api_keys_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: concept_edges concept_edges_namespace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.concept_edges
    ADD CONSTRAINT concept_edges_namespace_id_fkey FOREIGN KEY (namespace_id) REFERENCES public.namespaces(id) ON DELETE CASCADE;


--
-- Name: concept_edges concept_edges_source_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.concept_edges
    ADD CONSTRAINT concept_edges_source_id_fkey FOREIGN KEY (source_id) REFERENCES public.concepts(id) ON DELETE CASCADE;


--
-- Name: concept_edges concept_edges_target_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.concept_edges
    ADD CONSTRAINT concept_edges_target_id_fkey FOREIGN KEY (target_id) REFERENCES public.concepts(id) ON DELETE CASCADE;


--
-- Name: concepts concepts_namespace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.concepts
    ADD CONSTRAINT concepts_namespace_id_fkey FOREIGN KEY (namespace_id) REFERENCES public.namespaces(id) ON DELETE CASCADE;


--
-- Name: jobs jobs_memory_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_memory_id_fkey FOREIGN KEY (memory_id) REFERENCES public.memories(id) ON DELETE CASCADE;


--
-- Name: memories memories_namespace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memories
    ADD CONSTRAINT memories_namespace_id_fkey FOREIGN KEY (namespace_id) REFERENCES public.namespaces(id) ON DELETE CASCADE;


--
-- Name: memory_concepts memory_concepts_concept_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_concepts
    ADD CONSTRAINT memory_concepts_concept_id_fkey FOREIGN KEY (concept_id) REFERENCES public.concepts(id) ON DELETE CASCADE;


--
-- Name: memory_concepts memory_concepts_memory_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_concepts
    ADD CONSTRAINT memory_concepts_memory_id_fkey FOREIGN KEY (memory_id) REFERENCES public.memories(id) ON DELETE CASCADE;


--
-- Name: memory_links memory_links_source_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_links
    ADD CONSTRAINT memory_links_source_id_fkey FOREIGN KEY (source_id) REFERENCES public.memories(id) ON DELETE CASCADE;


--
-- Name: memory_links memory_links_target_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_links
    ADD CONSTRAINT memory_links_target_id_fkey FOREIGN KEY (target_id) REFERENCES public.memories(id) ON DELETE CASCADE;


--
-- Name: memory_secrets memory_secrets_memory_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_secrets
    ADD CONSTRAINT memory_secrets_memory_id_fkey FOREIGN KEY (memory_id) REFERENCES public.memories(id) ON DELETE CASCADE;


--
-- Name: memory_terms memory_terms_namespace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_terms
    ADD CONSTRAINT memory_terms_namespace_id_fkey FOREIGN KEY (namespace_id) REFERENCES public.namespaces(id) ON DELETE CASCADE;


--
-- Name: namespace_shares namespace_shares_grantee_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.namespace_shares
    ADD CONSTRAINT namespace_shares_grantee_id_fkey FOREIGN KEY (grantee_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: namespace_shares namespace_shares_namespace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.namespace_shares
    ADD CONSTRAINT namespace_shares_namespace_id_fkey FOREIGN KEY (namespace_id) REFERENCES public.namespaces(id) ON DELETE CASCADE;


--
-- Name: namespace_terms namespace_terms_namespace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.namespace_terms
    ADD CONSTRAINT namespace_terms_namespace_id_fkey FOREIGN KEY (namespace_id) REFERENCES public.namespaces(id) ON DELETE CASCADE;


--
-- Name: namespaces namespaces_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.namespaces
    ADD CONSTRAINT namespaces_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: secret_reads secret_reads_key_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.secret_reads
    ADD CONSTRAINT secret_reads_key_id_fkey FOREIGN KEY (key_id) REFERENCES public.api_keys(id) ON DELETE SET NULL;


--
-- Name: secret_reads secret_reads_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.secret_reads
    ADD CONSTRAINT secret_reads_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: session_ledger session_ledger_memory_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.session_ledger
    ADD CONSTRAINT session_ledger_memory_id_fkey FOREIGN KEY (memory_id) REFERENCES public.memories(id) ON DELETE CASCADE;


--
-- Name: session_ledger session_ledger_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.session_ledger
    ADD CONSTRAINT session_ledger_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: term_counts term_counts_namespace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.term_counts
    ADD CONSTRAINT term_counts_namespace_id_fkey FOREIGN KEY (namespace_id) REFERENCES public.namespaces(id) ON DELETE CASCADE;


--
-- Name: ui_sessions ui_sessions_key_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ui_sessions
    ADD CONSTRAINT ui_sessions_key_id_fkey FOREIGN KEY (key_id) REFERENCES public.api_keys(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--
